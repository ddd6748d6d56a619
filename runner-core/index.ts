export { Runner, type RunnerOptions } from './runner.js';
export { createApiServer, type ApiOptions } from './api/server.js';
export { isLoopbackHost } from './api/http-io.js';
export { EventBus, type RunnerEvent, type RunnerEventListener } from './events.js';
export { newRunId, RUN_ID_PATTERN } from './ids.js';
export { nextDelay, parseRetryAfter, type RetryPolicy } from './retry.js';
export { EndpointError, EndpointTimeoutError, ApiError } from './errors.js';
export * from './store/index.js';
