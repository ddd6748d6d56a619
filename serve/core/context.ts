import type { LogLevel } from '../../protocol/step-logs.js';
import type { TraceContext } from '../../protocol/trace-context.js';
import type { DriveSession } from './session.js';
import { stepMethods, type StepMethods } from './step-kinds/index.js';
export type { InvokeOptions, InvokeResult } from './step-kinds/invoke.js';
export type { StepInfo, StepOptions } from './step-kinds/run.js';
export type { CallOptions, CallResponse } from './step-kinds/call.js';
export type { WaitForEventResult } from './step-kinds/wait.js';

/**
 * What a workflow function receives. `Payload` types the start body; `Env` the host's variables.
 * The step methods (`run`, `sleep`, `call`…) are each kind's, from serve/core/step-kinds/.
 */
export interface WorkflowContext<Payload = unknown, Env = Record<string, unknown>> extends StepMethods {
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

export function createContext(
  init: ContextInit,
  session: DriveSession,
): WorkflowContext<unknown, Record<string, unknown>> {
  return {
    ...init,
    ...stepMethods({
      execute: (name, fn, options) => session.run(name, fn, options),
      suspend: (kind, name, describe) => session.suspend(kind, name, describe),
      clock: () => session.clock(),
      url: init.url,
    }),
    cancel: () => session.cancel(),
    log: (level, message, fields) => session.log(level, message, fields),
  };
}
