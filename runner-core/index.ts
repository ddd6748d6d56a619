export { Runner, type RunnerOptions } from './runner.js';
export { createApiApp, type ApiAppOptions, type ApiEnv } from './api/app.js';
export { createRunner, type CreateRunnerOptions, type CreatedRunner } from './create-runner.js';
export { consoleLogger, type Logger, type LogFields } from './telemetry/logger.js';
export { createApiServer, type ApiOptions } from './api/server.js';
export { isLoopbackHost } from './api/http-io.js';
export { EventBus, type RunnerEvent, type RunnerEventListener } from './commit/events.js';
export {
  OMITTED_WHEN_SLIM,
  eventRunId,
  fillAttempt,
  fillRun,
  fillStep,
  isSlim,
  slimEvent,
  type SlimRunnerEvent,
  type StreamEvent,
} from '../api/events.js';
export { SSE_MAX_BUFFERED_BYTES, SSE_MAX_SUBSCRIBERS } from './api/sse.js';
export { newRunId, RUN_ID_PATTERN } from './ids.js';
export { nextDelay, parseRetryAfter, type RetryPolicy } from './drive/retry.js';
export {
  EndpointError,
  EndpointTimeoutError,
  ApiError,
  OriginNotAllowedError,
  RunNotFoundError,
  RunFinishedError,
  DatabaseOpenError,
  RunnerConfigError,
} from './errors.js';
export {
  LOOPBACK_ORIGINS,
  originAllowed,
  parseOriginPattern,
  parseOriginPatterns,
  type OriginPattern,
} from './egress/origins.js';
export { DEFAULT_UNREACHABLE_POLICY, type UnreachablePolicy } from './drive/unreachable.js';
export type { AlertOptions } from './alerts/options.js';
export type { AlertDocument } from './alerts/document.js';
export { ALERT_ID_HEADER, ALERT_SIGNATURE_HEADER, verifyAlertSignature } from './alerts/signature.js';
export * from './store/index.js';
export { otelConfigFromEnv, parseOtlpHeaders, type OtelConfig, type OtlpProtocol } from './telemetry/otel-config.js';
export { runTraceIds } from './telemetry/run-trace-ids.js';
export type { Tracing, AttemptTrace, AttemptTraceInfo } from './telemetry/tracing.js';
