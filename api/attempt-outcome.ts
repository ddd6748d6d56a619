import type { TerminalOutcome } from '../protocol/outcome.js';

/**
 * How an attempt (one request the runner sent for a run) ended, as one type. The log stores and
 * serves it as text, `<to> <end>` (`failure-function done`, `call retry`, `alert delivered`), or
 * the end alone for a request to the run's own route (`done`, `suspend`): rows written before this
 * type existed read the same. Build the text with `attemptOutcome`, never by joining strings.
 */

/** How a drive request ended: its terminal outcome line, or `error` (no terminal line: a transport problem, a 5xx). */
export type DriveEnd = TerminalOutcome['t'] | 'error';

/** How a QStash delivery ended (runner-core/qstash/delivery/delivery.ts): the verdict on the answer. */
export type DeliveryEnd = 'done' | 'retry' | 'unreachable' | 'failed';

/** How a failure alert's delivery ended (runner-core/alerts/): `failed` when this runner could not send it. */
export type AlertEnd = 'delivered' | 'error' | 'failed';

/** Who an attempt went to, and how it ended: the one definition of every outcome. */
export type AttemptEnd =
  /** The run's route: a drive request (wfkit protocol) or a delivery (Upstash protocol); `aborted` when cut short. */
  | { to: 'route'; end: DriveEnd | DeliveryEnd | 'aborted' }
  /** The route's failureFunction (a drive with the failure), or the Upstash run's failure callback. */
  | { to: 'failure-function'; end: DriveEnd | DeliveryEnd }
  /** A `context.call`'s third party, delivered by the QStash engine. */
  | { to: 'call'; end: DeliveryEnd }
  /** The failure alert webhook. */
  | { to: 'alert'; end: AlertEnd };

type OutcomeText<E> = E extends { to: 'route'; end: infer End extends string }
  ? End
  : E extends { to: infer To extends string; end: infer End extends string }
    ? `${To} ${End}`
    : never;

/** An attempt's outcome as stored and served (`Attempt.outcome`): `done`, `failure-function failed`, `alert delivered`… */
export type AttemptOutcome = OutcomeText<AttemptEnd>;

/**
 * The stored text of an attempt's end.
 * @example attemptOutcome({ to: 'failure-function', end: 'done' }) // 'failure-function done'
 */
export function attemptOutcome(end: AttemptEnd): AttemptOutcome {
  return (end.to === 'route' ? end.end : `${end.to} ${end.end}`) as AttemptOutcome;
}
