import type { Duration } from '../../protocol/duration.js';
import type { LogLevel } from '../../protocol/step-logs.js';
import type { TraceContext } from '../../protocol/trace-context.js';
import type { InvokeOptions, InvokeResult } from './invoke.js';
import type { DriveSession } from './session.js';
export type { InvokeOptions, InvokeResult } from './invoke.js';

/** Per-step options of `context.run`. */
export interface StepOptions {
  /** Retries of this step, overriding the workflow's. */
  retries?: number;
  /** Backoff base of this step's retries: milliseconds, or a string like "2s". */
  retryDelay?: Duration;
  /** Fail the attempt when `fn` takes longer: seconds, or a string like "30s". */
  timeout?: Duration;
}

/** What a step's `fn` receives: where it stands, and its span when the runner exports traces. */
export interface StepInfo {
  readonly index: number;
  readonly name: string;
  /**
   * The trace context of this step's span (the runner exports the span with this id), else
   * undefined: the parent for the app's own spans inside the step.
   */
  readonly trace: TraceContext | undefined;
}

/** What `context.call` asks the runner to send. */
export interface CallOptions {
  url: string;
  /** @default "GET" */
  method?: string;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON (with `content-type: application/json`). */
  body?: unknown;
  /** For the whole exchange: seconds, or a string like "2m". @default "30s" */
  timeout?: Duration;
  /** Retries after a transport failure (or an HTTP error with `throwHttpErrors`). @default 0 */
  retries?: number;
  /** Fail the step on a non-2xx answer instead of returning it. @default false */
  throwHttpErrors?: boolean;
}

/** The answer `context.call` returns: the body parsed as JSON when the response says it is JSON. */
export interface CallResponse<Body = unknown> {
  status: number;
  headers: Record<string, string>;
  body: Body;
}

export interface WaitForEventResult<Data = unknown> {
  eventData: Data | undefined;
  /** True when the timeout passed before any `notify`. */
  timeout: boolean;
}

/** What a workflow function receives. `Payload` types the start body; `Env` the host's variables. */
export interface WorkflowContext<Payload = unknown, Env = Record<string, unknown>> {
  /** `wfr_…`, the id the start request answered with. */
  readonly workflowRunId: string;
  /** The JSON body the run was started with (`undefined` for an empty body). */
  readonly requestPayload: Payload;
  /** Headers of the start request, credentials redacted. */
  readonly headers: Readonly<Record<string, string>>;
  /** The host's variables (process.env, Workers bindings, the `env` option). */
  readonly env: Env;
  /** The public URL the runner calls for this workflow. */
  readonly url: string;
  /**
   * The drive request's W3C trace context when the runner exports OpenTelemetry traces (its
   * `traceparent` header), else undefined. Every drive of a run shares `traceId`; `spanId` is this
   * drive's span: make it the parent of the app's own spans, or pass `traceparent` on. Inside a
   * step, its `fn`'s argument has the step's own span (`step.trace`).
   * @example tracer.startActiveSpan('charge', {}, propagation.extract(ROOT_CONTEXT, { traceparent: context.trace?.traceparent }), …)
   */
  readonly trace: TraceContext | undefined;
  /**
   * A durable step: `fn` runs once, its result is stored by the runner, and on every later
   * replay `run` answers from that result without calling `fn`. `name` must be stable.
   * @example const user = await context.run("load-user", () => db.users.get(id));
   */
  run<T>(name: string, fn: (step: StepInfo) => T | Promise<T>, options?: StepOptions): Promise<Awaited<T>>;
  /**
   * Pauses the run: the request ends and the runner wakes it later (restarts included).
   * @example await context.sleep("cool-down", "10m");
   */
  sleep(name: string, duration: Duration): Promise<void>;
  /** Pauses the run until a time (Date, epoch ms, or a date string). */
  sleepUntil(name: string, time: Date | number | string): Promise<void>;
  /**
   * An HTTP request the runner makes, so a slow API does not hold this request open. Non-2xx
   * answers are data unless `throwHttpErrors` is set.
   * @example const { status, body } = await context.call("charge", { url, method: "POST", body: { amount } });
   */
  call<Body = unknown>(name: string, options: CallOptions): Promise<CallResponse<Body>>;
  /**
   * Waits until `notify(eventId, data)` (client, API or `wf notify`), or the timeout (default 7 days).
   * An event notified shortly before the wait is registered is kept and delivered (see README).
   */
  waitForEvent<Data = unknown>(name: string, eventId: string, options?: { timeout?: Duration }): Promise<WaitForEventResult<Data>>;
  /**
   * Starts a run of another workflow route (this app or another the runner allows) and waits for
   * it to end, durably: this request ends meanwhile and the runner wakes the run when the child
   * has finished. Never throws for the child's failure: check `isFailed` / `isCanceled`.
   * @example const { body, isFailed } = await context.invoke("resize", { url: "/api/resize", body: { id } });
   */
  invoke<Body = unknown, Payload = any>(name: string, options: InvokeOptions<Payload>): Promise<InvokeResult<Body>>;
  /** Ends the run as cancelled; nothing after this runs. */
  cancel(): Promise<never>;
  /**
   * A structured log line: printed like `console[level]`, and inside `context.run`'s function kept
   * with that step's execution (shown in the dashboards and `wf logs --step`). Never throws.
   * (`console.*` inside a step is kept too.)
   * @example context.log("info", "charged", { amount, currency });
   */
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}

export type Workflow<Payload = unknown, Env = Record<string, unknown>> = (
  context: WorkflowContext<Payload, Env>,
) => unknown;

export interface ContextInit {
  workflowRunId: string;
  requestPayload: unknown;
  headers: Record<string, string>;
  env: Record<string, unknown>;
  url: string;
  trace: TraceContext | undefined;
}

export function createContext(init: ContextInit, session: DriveSession): WorkflowContext<unknown, Record<string, unknown>> {
  return {
    ...init,
    run: (name, fn, options) => session.run(name, fn, options),
    sleep: (name, duration) => session.sleep(name, duration),
    sleepUntil: (name, time) => session.sleepUntil(name, time),
    call: (name, options) => session.call(name, options) as never,
    waitForEvent: (name, eventId, options) => session.waitForEvent(name, eventId, options) as never,
    invoke: (name, options) => session.invoke(name, options, init.url) as never,
    cancel: () => session.cancel(),
    log: (level, message, fields) => session.log(level, message, fields),
  };
}
