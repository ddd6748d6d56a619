import { createHandler, type Handle, type ServeOptions, type Workflow } from './core/handler.js';

export { createHandler } from './core/handler.js';
export type { Handle, HostContext, ServeOptions, Workflow, WorkflowContext } from './core/handler.js';
export type {
  CallOptions,
  CallResponse,
  InvokeOptions,
  InvokeResult,
  StepInfo,
  StepOptions,
  WaitForEventResult,
} from './core/context.js';
export type { FailureFunctionArgs } from './core/options.js';
export type {
  StandardSchemaV1,
  StandardSchemaIssue,
  StandardSchemaResult,
  InferSchemaOutput,
  ValidationIssue,
} from './core/schema.js';
export type { Duration } from '../protocol/duration.js';
export type { LogLevel, LogLine, StepLogs } from '../protocol/step-logs.js';
export type { TraceContext } from '../protocol/trace-context.js';
export {
  WorkflowError,
  NonRetryableError,
  RetryAfterError,
  ProtocolError,
  DeterminismError,
  StepFailedError,
} from '../protocol/errors.js';
export { Client, ClientError, type ClientOptions, type TriggerOptions, type RunDetail } from './client.js';

/**
 * Serve a workflow on any host with web-standard `Request`/`Response` (Bun, Deno, Workers fetch).
 * @example export default { fetch: serve(async (context) => { await context.run("a", () => 1); }) };
 */
export function serve<Payload = unknown, Env = Record<string, unknown>>(
  workflow: Workflow<Payload, Env>,
  options?: ServeOptions<Payload, Env>,
): Handle {
  return createHandler(workflow, options);
}
