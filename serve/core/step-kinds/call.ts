import { toMilliseconds, type Duration } from '../../../protocol/duration.js';
import { WorkflowError } from '../../../protocol/errors.js';
import type { CallRequest } from '../../../protocol/step-kinds/call.js';
import { checkRetries, encodeBody } from './request-options.js';
import type { SuspendTools } from './types.js';

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

export interface CallMethods {
  /**
   * An HTTP request the runner makes, so a slow API does not hold this request open. Non-2xx
   * answers are data unless `throwHttpErrors` is set.
   * @example const { status, body } = await context.call("charge", { url, method: "POST", body: { amount } });
   */
  call<Body = unknown>(name: string, options: CallOptions): Promise<CallResponse<Body>>;
}

/** The wire form of `context.call`'s options; a non-string body goes as JSON. */
export function toCallRequest(name: string, options: CallOptions): CallRequest {
  const where = `call "${name}"`;
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new WorkflowError(
      'CONFIG',
      `Expected \`url\` of ${where} to be an absolute URL, got ${JSON.stringify(options.url)}.`,
    );
  }
  const headers: Record<string, string> = { ...options.headers };
  const request: CallRequest = { url: url.href, method: (options.method ?? 'GET').toUpperCase(), headers };
  if (options.body !== undefined) request.body = encodeBody(options.body, headers);
  if (options.timeout !== undefined) request.timeoutMs = toMilliseconds(options.timeout, `\`timeout\` of ${where}`);
  if (options.retries !== undefined) request.retries = checkRetries(options.retries, where);
  if (options.throwHttpErrors) request.throwHttpErrors = true;
  return request;
}

export const callMethods = (tools: SuspendTools): CallMethods => ({
  call: (name, options) => tools.suspend('call', name, () => ({ request: toCallRequest(name, options) })) as never,
});
