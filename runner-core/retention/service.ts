import { PRUNE_MAX_RUNS, type PruneRequest, type PruneResult } from '../../api/prune.js';
import { ProtocolError } from '../../protocol/errors.js';
import { describeError, type Logger } from '../telemetry/logger.js';
import { formatPruneCursor, parsePruneCursor, prunePass, type PruneParts } from './prune.js';

export interface RetentionServiceOptions {
  parts: PruneParts;
  /** Keep finished runs this long (ms); 0 keeps them forever (no background pruning). */
  retentionMs: number;
  now: () => number;
  logger: Logger;
}

/** Runs one background pass looks at: it holds the prune lock that long, and a stop waits for it. */
const BACKGROUND_PASS_RUNS = 2_000;

/** How often the background pruner looks: a tenth of the retention, between 250 ms and 10 minutes. */
export function pruneInterval(retentionMs: number): number {
  return Math.min(600_000, Math.max(250, Math.floor(retentionMs / 10)));
}

/**
 * Retention: prunes, in the background, the runs that finished more than `retentionMs` ago (every
 * `pruneInterval`, each pass bounded, until none is left), and answers `POST /v1/prune`. Runs that
 * still owe something (a pending failureFunction call, alert, or QStash failure callback) stay.
 */
export class RetentionService {
  readonly retentionMs: number;
  readonly #o: RetentionServiceOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(options: RetentionServiceOptions) {
    this.#o = options;
    this.retentionMs = options.retentionMs;
  }

  start(): void {
    if (this.retentionMs <= 0) return;
    const loop = (): void => {
      this.#running = this.#pruneAll().finally(() => {
        if (!this.#stopped) this.#timer = setTimeout(loop, pruneInterval(this.retentionMs));
      });
    };
    this.#timer = setTimeout(loop, pruneInterval(this.retentionMs));
  }

  /** Stops the timer and waits for a pass under way (at most one bounded pass). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** One pass after another until every run old enough was looked at (or another runner prunes, or a stop). */
  async #pruneAll(): Promise<void> {
    const { parts, now, logger } = this.#o;
    const finishedBefore = now() - this.retentionMs;
    try {
      let after = null;
      do {
        const pass = await prunePass(parts, { finishedBefore, dryRun: false, after, maxRuns: BACKGROUND_PASS_RUNS });
        if (pass.runs > 0 || pass.messages > 0) {
          logger.info(
            `pruned ${pass.runs} run${pass.runs === 1 ? '' : 's'} finished before ${new Date(finishedBefore).toISOString()} (${pass.steps} steps, ${pass.attempts} attempts, ${pass.stepLogs} step logs, ${pass.messages} QStash messages)`,
            { runs: pass.runs },
          );
        }
        if (pass.busy) return;
        after = pass.cursor;
      } while (after !== null && !this.#stopped);
    } catch (error) {
      logger.error(
        `pruning finished runs failed (tried again in ${pruneInterval(this.retentionMs)} ms): ${describeError(error)}`,
      );
    }
  }

  /** `POST /v1/prune`: one bounded pass from the request's cursor. */
  async prune(request: PruneRequest): Promise<PruneResult> {
    const after = request.cursor === undefined ? null : parsePruneCursor(request.cursor);
    if (after === undefined)
      throw new ProtocolError(
        `Expected \`cursor\` to be the cursor a previous prune answered (like 1767225600000.wfr_…), got "${request.cursor}".`,
      );
    const pass = await prunePass(this.#o.parts, {
      finishedBefore: this.#o.now() - request.olderThanMs,
      dryRun: request.dryRun ?? false,
      after,
      maxRuns: request.maxRuns ?? PRUNE_MAX_RUNS,
    });
    return { ...pass, cursor: formatPruneCursor(pass.cursor) };
  }
}
