import type { Outcome, TerminalOutcome } from '../../protocol/outcome.js';
import type { SerializedError } from '../../protocol/errors.js';
import type { Run, Step } from '../store/types.js';

/**
 * What the runner tells a tracer, in its own words: a drive request began, its steps started and
 * finished, it ended; a run ended. The OpenTelemetry implementation (`telemetry/otel-tracing.ts`)
 * is loaded only when traces are exported; with none configured the driver holds `undefined` and
 * every hook below is one skipped optional call, so runs pay nothing for it.
 */
export interface Tracing {
  /** A drive request (or a failureFunction delivery) is about to be sent. */
  attempt(run: Run, info: AttemptTraceInfo): AttemptTrace;
  /**
   * A run finished (completed, failed, cancelled) at `at`: its span, from `createdAt`, is emitted now,
   * with the spans of the steps the runner resolved between drives (sleeps, waits, calls, invokes).
   */
  runEnded(run: Run, steps: readonly Step[], at: number): void;
  /**
   * The `traceparent` the runner sends with a `context.call`'s HTTP request: the call step's span
   * (emitted with the run), so the called service's spans nest under it.
   */
  callTraceparent(runId: string, index: number): string;
  /**
   * A QStash message of an Upstash run was sent and answered (or not) between `startedAt` and
   * `endedAt`: the SDK drives those runs, so each delivery is told once, when it is over.
   */
  delivery?(run: Run, info: DeliveryTraceInfo): void;
  /** Exports what is still buffered, then stops (the runner is stopping). */
  shutdown(): Promise<void>;
}

/** One delivery of an Upstash run's message (runner-core/qstash/delivery/delivery.ts). */
export interface DeliveryTraceInfo {
  /** The attempt's number in the run's log (`Attempt.seq`). */
  seq: number;
  /** Which try of the message this was (`Upstash-Retried` + 1). */
  attempt: number;
  /** What it was: a step delivered to the workflow, a `context.call`'s request, its callback, the failure callback. */
  purpose: 'delivery' | 'call' | 'callback' | 'failure-callback';
  url: string;
  method: string;
  messageId: string;
  startedAt: number;
  endedAt: number;
  /** The answer's status; null when none came. */
  status: number | null;
  /** Why the delivery did not count (an error answer, no answer). */
  error?: SerializedError;
}

export interface AttemptTraceInfo {
  /** The attempt's number in the run's log (`Attempt.seq`). */
  seq: number;
  /** Which try of the failing step this drive is (`wf-attempt`: failures so far + 1). */
  attempt: number;
  startedAt: number;
  /** A failed run's failureFunction delivery rather than a drive. */
  failureFunction: boolean;
}

/** One drive request's span and the spans of the steps it runs. */
export interface AttemptTrace {
  /** The W3C `traceparent` of the drive's span, sent on the request ('' for none). */
  readonly traceparent: string;
  /** A `started` or `step` line arrived at `at`. */
  step(outcome: Exclude<Outcome, TerminalOutcome>, at: number): void;
  /** The drive ended: its response status (null when none came), and the terminal line or error. */
  end(status: number | null, end: TerminalOutcome | { t: 'error'; error: SerializedError }, at: number): void;
}
