import type { Dispatcher } from 'undici';
import { serializeError, type SerializedError } from '../protocol/errors.js';
import type { CallRequest } from '../protocol/messages.js';
import { nextDelay } from './retry.js';

/** What `context.call` returns: the body parsed as JSON when the answer says it is JSON. */
export interface CallResult {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** Calls retry faster than steps: they are often a flaky upstream, not a bug in the app. */
const CALL_RETRY_BASE_MS = 500;

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

function parseBody(text: string, contentType: string | undefined): unknown {
  if (!contentType || !/[/+]json\b/i.test(contentType)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function once(dispatcher: Dispatcher, request: CallRequest, signal: AbortSignal): Promise<CallResult> {
  const url = new URL(request.url);
  const timeout = AbortSignal.timeout(request.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
  const response = await dispatcher.request({
    origin: url.origin,
    path: url.pathname + url.search,
    method: request.method as Dispatcher.HttpMethod,
    headers: request.headers,
    body: request.body,
    signal: AbortSignal.any([signal, timeout]),
  });
  const text = await response.body.text();
  const headers = flatten(response.headers);
  return { status: response.statusCode, headers, body: parseBody(text, headers['content-type']) };
}

/**
 * Makes the HTTP request of a `context.call` step, with its retries. A non-2xx answer is a
 * result unless `throwHttpErrors` asks otherwise. Never throws: failures come back as data.
 */
export async function performCall(
  dispatcher: Dispatcher,
  request: CallRequest,
  signal: AbortSignal,
  random: () => number = Math.random,
): Promise<{ ok: true; result: CallResult } | { ok: false; error: SerializedError }> {
  const retries = request.retries ?? 0;
  let error: SerializedError = { name: 'Error', message: 'not attempted' };
  for (let attempt = 0; attempt <= retries && !signal.aborted; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, nextDelay(attempt, { retries, baseMs: CALL_RETRY_BASE_MS }, random)));
    try {
      const result = await once(dispatcher, request, signal);
      if (!request.throwHttpErrors || result.status < 400) return { ok: true, result };
      error = { name: 'HttpError', message: `Call ${request.method} ${request.url} responded ${result.status} (attempt ${attempt + 1}/${retries + 1}).` };
    } catch (cause) {
      const timedOut = cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError') && !signal.aborted;
      error = timedOut
        ? { name: 'TimeoutError', message: `Call ${request.method} ${request.url} took longer than ${request.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS} ms (attempt ${attempt + 1}/${retries + 1}).` }
        : { ...serializeError(cause), message: `Call ${request.method} ${request.url} failed (attempt ${attempt + 1}/${retries + 1}): ${(cause as Error).message}` };
    }
  }
  return { ok: false, error };
}
