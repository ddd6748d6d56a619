import type { Commit } from '../commit/commit-queue.js';
import { describeError, type Logger } from '../telemetry/logger.js';
import type { Change, Run, Store } from '../store/types.js';
import type { Tracing } from '../telemetry/tracing.js';
import type { RunEnding } from './end.js';

/** A run that just ended, as its end was committed. */
export interface EndedRun {
  run: Run;
  at: number;
  /** An Upstash run completed by its SDK: the workflow's result as the SDK sent it (its invoker gets it as it is). */
  result?: string;
}

/** Told of every run that ended, after the commit; a failure is logged, never thrown into the path that ended it. */
export type EndListener = (ended: EndedRun) => Promise<void>;

export interface RunEndsOptions {
  store: Store;
  /** The runner's commit (group-committed, then announced: the dashboards hear of the end from it). */
  commit: Commit;
  /** The runner has an alert webhook: every run that fails owes an alert. */
  alerts: boolean;
  tracing?: Tracing | undefined;
  logger: Logger;
}

/**
 * The one authority for a run's end. Every path that ends a run builds the end with end.ts
 * (`completion`, `cancellation`, `failure`: the status, the steps closed, the failureFunction call
 * and the alert owed) and then tells this object, which does what follows any end: the run's trace
 * span (`Tracing.runEnded`), and its listeners (the parent of a child run is woken; the QStash
 * engine drops an Upstash run's pending messages and answers its invoker). The native driver
 * commits its end itself (fenced, with the attempt's log) and calls `ended`; the actions and the
 * QStash engine call `end`, which commits too (unfenced, as API actions are).
 */
export class RunEnds {
  readonly alerts: boolean;

  private readonly options: RunEndsOptions;

  private readonly listeners: EndListener[] = [];

  constructor(options: RunEndsOptions) {
    this.options = options;
    this.alerts = options.alerts;
  }

  /** Adds a listener told of every run that ended (in the order added). */
  onEnded(listener: EndListener): void {
    this.listeners.push(listener);
  }

  /**
   * Commits `ending` (with `extra` changes, such as the attempt that ended the run, in the same
   * transaction), then does what follows an end, unless another end got there first. Returns the
   * run as stored after it.
   */
  async end(
    runId: string,
    ending: RunEnding,
    at: number,
    options: { extra?: Change[]; result?: string } = {},
  ): Promise<Run> {
    const { store, commit } = this.options;
    await commit([...(options.extra ?? []), ...ending.changes, { type: 'run', runId, patch: ending.patch, at }]);
    const run = await store.getRun(runId);
    if (!run) throw new Error(`Expected run ${runId} to exist after its end was committed, but it was not found.`);
    // Another end got there first (a finished run keeps its status): that one was followed up already.
    if (run.status !== ending.patch.status) return run;
    await this.ended({ run, at, ...(options.result !== undefined && { result: options.result }) });
    return run;
  }

  /** What follows a run's end, once it is committed: its trace (traces exported only), then the listeners. */
  async ended(ended: EndedRun): Promise<void> {
    const { store, tracing, logger } = this.options;
    const runId = ended.run.id;
    if (tracing) {
      // The run's steps are read once, at its end; a failed read costs the trace, not the end.
      try {
        tracing.runEnded(ended.run, await store.listSteps(runId), ended.at);
      } catch (error) {
        logger.error(`could not read the steps of run ${runId} for its trace: ${describeError(error)}`, { runId });
      }
    }
    for (const listener of this.listeners) {
      try {
        await listener(ended);
      } catch (error) {
        logger.error(
          `what follows the end of run ${runId} failed (its parent or invoker may hear of it only from a later poll): ${describeError(error)}`,
          { runId },
        );
      }
    }
  }
}
