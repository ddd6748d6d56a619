/**
 * Upstash-protocol waits: what `context.waitForEvent` registers (`POST /v2/wait/:eventId`), what
 * `notify` resolves and what a timeout resolves. The store keeps them apart from native waits
 * (`steps.event_id`, `runs.next_at`), which the native scheduler drives.
 */

/** The step of the workflow a wait belongs to, as the SDK sent it. */
export interface WaitStep {
  stepId: number;
  stepName: string;
  stepType: string;
  concurrent: number;
  /** Set for a wait inside `Promise.all`: the position its result goes to (`stepId` is then 0). */
  targetStep?: number;
}

/** A registered wait, as stored and as `GET /v2/waiters/:eventId` shows it (plus the step). */
export interface Wait {
  runId: string;
  eventId: string;
  /** The workflow's URL, where the result of the wait is delivered. */
  url: string;
  step: WaitStep;
  /** The SDK's duration text (`7d`, `30s`), echoed back in the result step. */
  timeout: string;
  createdAt: number;
  /** When the wait times out, epoch ms. */
  deadline: number;
  headers: Record<string, string[]>;
  timeoutUrl?: string;
  timeoutBody?: string;
  timeoutHeaders?: Record<string, string[]>;
}

/** The position the wait's result is delivered at: the plan step's target inside `Promise.all`. */
export function resultStepId(step: WaitStep): number {
  return step.stepId === 0 && step.targetStep !== undefined ? step.targetStep : step.stepId;
}

/**
 * The step delivered to the workflow when the wait ends: `out` is the notify's body in base64
 * (the SDK decodes it, then tries JSON), or absent with `waitTimeout: true` on a timeout.
 */
export function waitResultStep(
  wait: Pick<Wait, 'eventId' | 'step' | 'timeout'>,
  ended: { data: string } | { timedOut: true },
): Record<string, unknown> {
  const notified = 'data' in ended;
  return {
    stepId: resultStepId(wait.step),
    stepName: wait.step.stepName,
    stepType: wait.step.stepType,
    waitEventId: wait.eventId,
    timeout: wait.timeout,
    concurrent: wait.step.concurrent,
    ...(notified && { out: Buffer.from(ended.data, 'utf8').toString('base64') }),
    waitTimeout: !notified,
  };
}

/** A kept event handed to a wait when it registered, or the wait stored to be notified later. */
export type RegisterResult = { kind: 'kept-event'; data: string } | { kind: 'waiting' };

/** An event for one run's waits on `eventId` (`notifyRun`): kept until `keepUntil` when none waits. */
export interface RunNotification {
  runId: string;
  eventId: string;
  data: string;
  now: number;
  keepUntil: number;
  /** Events kept for the pair at most; past it the event is not kept. @default Infinity */
  maxKept?: number;
}

/** What `notifyRun` did: the waits it ended, and whether it kept the event for a later wait. */
export interface Notification {
  waits: Wait[];
  kept: boolean;
}

/**
 * Where waits live (SQLite or PostgreSQL, beside the runs). Every method is one transaction; on
 * PostgreSQL the two that check-then-write (`register`, `notifyRun`) hold an advisory lock on the
 * (run, event) pair, so a wait and a notify racing on two runners never both miss each other.
 */
export interface QstashWaitStore {
  /** Takes the oldest unexpired kept event for the wait's run and event id, else stores the wait. */
  register(wait: Wait, now: number): Promise<RegisterResult>;
  /** Removes and returns every wait on `eventId` (none being timed out right now). */
  takeWaits(eventId: string, now: number): Promise<Wait[]>;
  /**
   * The same for one run's waits; when it has none, keeps `data` for its next wait until `keepUntil`,
   * unless `maxKept` events are kept for the pair already (then `kept: false`).
   */
  notifyRun(notification: RunNotification): Promise<Notification>;
  /** The waits on `eventId`, oldest first, at most `limit`. */
  listWaits(eventId: string, limit: number): Promise<Wait[]>;
  /** Leases up to `limit` waits past their deadline to this caller for `leaseMs`, and drops expired kept events. */
  claimTimedOut(now: number, leaseMs: number, limit: number): Promise<Wait[]>;
  /** Removes one wait (its timeout was delivered, or its run is gone). */
  deleteWait(runId: string, eventId: string, stepId: number): Promise<void>;
  /** Retention: deletes the waits and kept events of these pruned runs; how many rows (a dry run counts them). */
  pruneRuns(runIds: readonly string[], options: { dryRun: boolean }): Promise<number>;
}
