import { credentialHeaderNames, REDACTED } from '../../../protocol/headers.js';
import type { Commit } from '../../commit/commit-queue.js';
import { RunFinishedError, RunNotFoundError } from '../../errors.js';
import type { Logger } from '../../telemetry/logger.js';
import { FINISHED_RUN_STATUSES, type Store } from '../../store/types.js';
import { resultStepId, waitResultStep, type QstashWaitStore, type Wait } from './waits.js';
import { waitEndedChanges, waitStartedChanges } from './steps.js';

/** What ending a wait needs from the engine: deliver one more step of a run to its workflow. */
export interface RunStepAppender {
  /** Appends `stepJson` to the run's steps and delivers it to the workflow URL; resolves the message id. */
  appendRunStep(runId: string, stepJson: string): Promise<string>;
}

export interface QstashWaitsOptions {
  store: Pick<Store, 'getRun' | 'listSteps'>;
  /** Where waits live (the engine's, stores.ts). */
  waitStore: QstashWaitStore;
  engine: RunStepAppender;
  /** The runner's commit (group-committed, then announced): the wait's step rows go through it. */
  commit: Commit;
  logger: Logger;
  now?: () => number;
  /** How long a run-targeted notify nobody waits for is kept for the run's next wait. @default 7 days */
  keepMs?: number;
  /** Lower-case credential header names, redacted before a wait is stored. @default the built-in list */
  redactNames?: ReadonlySet<string>;
}

export const DEFAULT_KEEP_MS = 7 * 86_400_000;

/** A run-targeted event nobody waits for, refused: `maxKept` are kept for the pair already. */
export class TooManyKeptEventsError extends Error {
  override name = 'TooManyKeptEventsError';
  constructor(runId: string, eventId: string, maxKept: number) {
    super(`Run ${runId} keeps ${maxKept} calls of ${eventId} for its next waits already; call again once it waits.`);
  }
}

/** One notified wait, as QStash's `NotifyResponse` needs it: the message that carries the event, or why none does. */
export interface Notified {
  wait: Wait;
  messageId: string;
  error: string;
}

/**
 * The one place Upstash-protocol waits begin and end, for the `/v2` routes, `wf notify`
 * (`Runner.notify`) and the timeouts: the store decides who gets an event; the engine delivers the
 * wait's result as one more step; the step rows tell the dashboards.
 */
export class QstashWaits {
  readonly #o: Required<QstashWaitsOptions>;
  constructor(options: QstashWaitsOptions) {
    this.#o = { now: Date.now, keepMs: DEFAULT_KEEP_MS, redactNames: credentialHeaderNames([]), ...options };
  }

  /** Header lists with credential values redacted: under their own name or forwarded (`Upstash-Forward-Authorization`). */
  #redact(lists: Record<string, string[]> | undefined): Record<string, string[]> | undefined {
    if (lists === undefined) return undefined;
    const names = this.#o.redactNames;
    const secret = (name: string): boolean =>
      names.has(name.toLowerCase()) || names.has(name.toLowerCase().replace(/^upstash-forward-/, ''));
    return Object.fromEntries(
      Object.entries(lists).map(([name, values]) => [name, secret(name) ? values.map(() => REDACTED) : values]),
    );
  }

  /** Registers `wait` (its run must be unfinished); a kept event for it ends it at once (lookback). */
  async register(
    wait: Omit<Wait, 'createdAt' | 'deadline'>,
    timeoutMs: number,
  ): Promise<{ waiting: true } | { waiting: false; messageId: string }> {
    const { store, engine, commit } = this.#o;
    const run = await store.getRun(wait.runId);
    // Domain errors: the API edge answers them 404 and 409 (api/error-response.ts).
    if (!run) throw new RunNotFoundError(wait.runId);
    if (FINISHED_RUN_STATUSES.has(run.status)) throw new RunFinishedError(wait.runId, run.status);
    // The same wait posted again (a delivery retried after the SDK had submitted it) once it ended:
    // registering it anew would end its step a second time, with a timeout after the event.
    const index = resultStepId(wait.step);
    if ((await store.listSteps(wait.runId)).some((step) => step.index === index && step.status === 'succeeded'))
      return { waiting: true };
    const at = this.#o.now();
    // Stored and shown by getWaiters: never with the app's credentials in it.
    const full: Wait = { ...wait, headers: this.#redact(wait.headers)!, createdAt: at, deadline: at + timeoutMs };
    const timeoutHeaders = this.#redact(wait.timeoutHeaders);
    if (timeoutHeaders !== undefined) full.timeoutHeaders = timeoutHeaders;
    const registered = await this.#o.waitStore.register(full, at);
    if (registered.kind === 'waiting') {
      await commit(waitStartedChanges(full, at));
      return { waiting: true };
    }
    // The step row first: a succeeded step never changes again, so ours ({ eventData, timeout }) is the one kept.
    await commit(waitEndedChanges(full, { data: registered.data }, at, this.#o.redactNames));
    const messageId = await engine.appendRunStep(
      wait.runId,
      JSON.stringify(waitResultStep(full, { data: registered.data })),
    );
    return { waiting: false, messageId };
  }

  /** Every wait on `eventId` gets `data` (the event's body, as text); nobody waiting means it is dropped, as on QStash. */
  async notify(eventId: string, data: string): Promise<Notified[]> {
    return this.#deliver(await this.#o.waitStore.takeWaits(eventId, this.#o.now()), data);
  }

  /**
   * One run's waits on `eventId` get `data`; when it has none, `data` is kept for its next wait
   * (lookback), unless `maxKept` are kept already: then it is refused (`TooManyKeptEventsError`).
   */
  async notifyRun(runId: string, eventId: string, data: string, maxKept?: number): Promise<Notified[]> {
    const at = this.#o.now();
    const { waits, kept } = await this.#o.waitStore.notifyRun({
      runId,
      eventId,
      data,
      now: at,
      keepUntil: at + this.#o.keepMs,
      maxKept,
    });
    if (waits.length === 0 && !kept) throw new TooManyKeptEventsError(runId, eventId, maxKept ?? 0);
    return this.#deliver(waits, data);
  }

  /** A run gone or finished meanwhile is that waiter's `error`; the others still get the event. */
  async #deliver(taken: Wait[], data: string): Promise<Notified[]> {
    const { store, engine, commit, logger } = this.#o;
    return Promise.all(
      taken.map(async (wait) => {
        // A run that ended while it waited (cancelled, failed) takes no event, and its step rows stay as they ended.
        const run = await store.getRun(wait.runId);
        if (!run || FINISHED_RUN_STATUSES.has(run.status))
          return {
            wait,
            messageId: '',
            error: `Workflow run ${wait.runId} is ${run ? run.status : 'gone'}: it takes no event.`,
          };
        try {
          await commit(waitEndedChanges(wait, { data }, this.#o.now(), this.#o.redactNames));
          const messageId = await engine.appendRunStep(wait.runId, JSON.stringify(waitResultStep(wait, { data })));
          return { wait, messageId, error: '' };
        } catch (error) {
          logger.warn(
            `notify ${wait.eventId}: run ${wait.runId} did not take the event: ${error instanceof Error ? error.message : String(error)}`,
          );
          return { wait, messageId: '', error: error instanceof Error ? error.message : String(error) };
        }
      }),
    );
  }

  /** A wait past its deadline ends with `waitTimeout: true` (see timeouts.ts, which leases it first). */
  async timeOut(wait: Wait): Promise<void> {
    await this.#o.commit(waitEndedChanges(wait, { timedOut: true }, this.#o.now()));
    await this.#o.engine.appendRunStep(wait.runId, JSON.stringify(waitResultStep(wait, { timedOut: true })));
  }
}
