import type { SerializedError } from '../protocol/errors.js';
import type { AttemptOutcome } from './attempt-outcome.js';
import type { CallRequest, StepKind } from '../protocol/messages.js';
import type { LogLine } from '../protocol/step-logs.js';
export type { LogLevel, LogLine } from '../protocol/step-logs.js';

/**
 * The records of the runner's API: what `GET /v1/runs…` answers, what events carry, what the
 * dashboards, `wf logs` and the `Client` read. One authority: the stores map their rows to these,
 * and nothing outside runner-core reads the store's own types.
 */

export type RunStatus = 'queued' | 'running' | 'sleeping' | 'waiting' | 'completed' | 'failed' | 'cancelled';
export type StepStatus = 'running' | 'retrying' | 'succeeded' | 'failed' | 'cancelled';

export const RUN_STATUSES: readonly RunStatus[] = [
  'queued',
  'running',
  'sleeping',
  'waiting',
  'completed',
  'failed',
  'cancelled',
];
export const FINISHED_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled']);

/**
 * Delivery of a failed run's `failureFunction` call: `pending` until the app takes it (the run stays
 * claimable meanwhile, though its status stays `failed`), then `delivered`, or `failed` once its
 * retries or the unreachable horizon ran out.
 */
export type FailureCallState = 'pending' | 'delivered' | 'failed';

/**
 * Delivery of a failed run's alert to the runner's alert webhook (`--alert-webhook`): `pending`
 * until the receiver answers 2xx (the run stays claimable meanwhile), then `delivered`, or
 * `failed` once the runner's unreachable horizon passed without an answer.
 */
export type AlertState = 'pending' | 'delivered' | 'failed';
export const ALERT_STATES: readonly AlertState[] = ['pending', 'delivered', 'failed'];

/*
 * Values: `output` is the plain JSON value, for readers like `curl` and `jq`; it is absent when
 * the value would not come back from JSON exactly as it was (a Date, Map, Set, BigInt,
 * undefined, NaN…). `outputEncoded` always carries it faithfully (devalue, see
 * `protocol/values.ts`; show it with `protocol/display.ts`).
 */

/** One workflow run. Times are epoch milliseconds. */
export interface Run {
  id: string;
  url: string;
  status: RunStatus;
  /** The start request's raw body and (redacted) headers. */
  body: string;
  headers: Record<string, string>;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** When the run is next due for a drive request; null when nothing is scheduled. */
  nextAt: number | null;
  /**
   * Consecutive failed attempts at the current position (0 after progress). Transport failures
   * (the app unreachable) never count here. While a failed run's failureFunction call is
   * pending, the consecutive failures of that call.
   */
  failures: number;
  /** Retry policy: retries after the first attempt, and the backoff base. */
  retries: number;
  retryDelayMs: number;
  /** Succeeded steps. */
  stepsDone: number;
  /** Total drive requests made. */
  attempts: number;
  /** The workflow's return value as JSON, when it survives JSON unchanged (see above). */
  output?: unknown;
  /** The return value, devalue-encoded (faithful for Date, Map, BigInt…); null when there is none. */
  outputEncoded: string | null;
  error: SerializedError | null;
  idempotencyKey: string | null;
  /** The schedule that started this run (present only on such runs; `GET /v1/runs?scheduleId=` lists them). */
  scheduleId?: string;
  /**
   * `upstash` for a run an `@upstash/workflow` app started through the runner's QStash API (`/v2/…`):
   * its steps come from the app's published messages, and it is driven by QStash deliveries, not drive requests.
   */
  protocol?: 'upstash';
  /**
   * Since when the app has not answered (refused or reset connections, DNS errors, timeouts,
   * 502/503/504, a stream cut before its last line); null while it answers. Any answered drive
   * clears it; past the runner's unreachable horizon from this time, the run fails.
   */
  unreachableSince: number | null;
  /** The failureFunction call of a failed run; null when there is none to deliver. */
  failureCall: FailureCallState | null;
  /** Deliveries of the failureFunction call so far (each is an attempt in the run's log). */
  failureCallAttempts: number;
  /**
   * The failure alert to the runner's webhook; null when the run owes none (it did not fail, or no
   * webhook was set). Always sent by this runner (null included, so a resumed run's event clears an
   * old one in a dashboard); absent only from older runners.
   */
  alert?: AlertState | null;
  /** Deliveries of the alert so far (each is an attempt in the run's log). */
  alertAttempts?: number;
  /** A child run (`context.invoke`): the run that invoked it and that step's index. Absent otherwise. */
  parentRunId?: string;
  parentStepIndex?: number;
  /** The flow control key the run shares limits under; absent without flow control. */
  flowKey?: string;
  /** Why the run waits for a runner now, e.g. "flow control `tenant-42`: 5 of 5 running"; absent when it does not. */
  queuedReason?: string;
}

/** One step of a run, by position. */
export interface Step {
  runId: string;
  index: number;
  name: string;
  kind: StepKind;
  status: StepStatus;
  /** The step's result (a call's answer) as JSON, when it survives JSON unchanged. */
  output?: unknown;
  /** The result, devalue-encoded (faithful for Date, Map, BigInt…); null when there is none. */
  outputEncoded: string | null;
  error: SerializedError | null;
  startedAt: number;
  finishedAt: number | null;
  durationMs: number | null;
  /**
   * Executions of this step the runner saw start and committed (its `started` lines). A lower
   * bound on real executions: an execution whose `started` line never reached the runner (the
   * connection or the runner died first) is not counted. More than 1 means it re-executed.
   */
  reportedExecutions: number;
  /** Failed executions so far. */
  failures: number;
  /** Steps started together (Promise.all) share a group number. */
  group: number | null;
  /** sleep: when it wakes; wait: when it times out. */
  until: number | null;
  /** wait: the event it waits for. */
  eventId: string | null;
  /** call: the request the runner sends (the answer is the output); invoke: the child's start (POST). */
  request: CallRequest | null;
  /** invoke: the child run it started, once started. */
  childRunId?: string;
}

/**
 * What one execution of a `run` step printed (`console.*` inside its function) and logged
 * (`context.log`), as the route sent it with the step's result or with the failure of the attempt
 * it failed in. Only executions that printed something have one.
 */
export interface StepLog {
  runId: string;
  index: number;
  name: string;
  /** The attempt (drive request, `Attempt.seq`) the step executed in. */
  attempt: number;
  /** How that execution ended: a failed one is retried, or failed the step for good. */
  status: 'succeeded' | 'failed';
  /** When the runner received the lines (epoch ms). */
  at: number;
  lines: LogLine[];
  /** Lines left out past the per-execution bound (1,000 lines, 64 KiB); 0 when none. */
  dropped: number;
}

/** One drive request to the route and what came back: the log the dashboards show. */
export interface Attempt {
  runId: string;
  seq: number;
  startedAt: number;
  durationMs: number;
  requestUrl: string;
  requestHeaders: Record<string, string>;
  requestBody: string;
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  /** How the attempt ended: done, failed, continue, or a transport problem (error is set); see attempt-outcome.ts. */
  outcome: AttemptOutcome;
  error: SerializedError | null;
}

export interface RunPage {
  runs: Run[];
  nextCursor: string | null;
}
