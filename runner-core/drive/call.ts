import { serializeError, type SerializedError } from '../../protocol/errors.js';
import type { CallRequest } from '../../protocol/messages.js';
import type { EgressGate } from '../egress/gate.js';
import type { Slot } from '../egress/slots.js';
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
/** Most of a call's answer read (it becomes the step's output, stored and replayed). */
export const CALL_MAX_ANSWER_BYTES = 10 * 1024 * 1024;

function parseBody(text: string, contentType: string | undefined): unknown {
  if (!contentType || !/[/+]json\b/i.test(contentType)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function once(egress: EgressGate, slot: Slot, request: CallRequest, signal: AbortSignal): Promise<CallResult> {
  const timeoutMs = request.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const answer = await egress.read(
    {
      purpose: 'call',
      slot,
      url: new URL(request.url),
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.any([signal, timeout]),
      // The call's own timeout, not the drive's (answer headers within 30 s).
      headersTimeoutMs: timeoutMs,
      bodyTimeoutMs: timeoutMs,
    },
    CALL_MAX_ANSWER_BYTES,
  );
  return {
    status: answer.status,
    headers: answer.headers,
    body: parseBody(answer.body.toString('utf8'), answer.headers['content-type']),
  };
}

/**
 * Makes the HTTP request of a `context.call` step, with its retries, through the egress gate in
 * the slot the caller holds at the target's origin. A non-2xx answer is a result unless
 * `throwHttpErrors` asks otherwise. Never throws: failures come back as data.
 */
export async function performCall(
  egress: EgressGate,
  slot: Slot,
  request: CallRequest,
  signal: AbortSignal,
  random: () => number = Math.random,
): Promise<{ ok: true; result: CallResult } | { ok: false; error: SerializedError }> {
  const retries = request.retries ?? 0;
  let error: SerializedError = { name: 'Error', message: 'not attempted' };
  for (let attempt = 0; attempt <= retries && !signal.aborted; attempt++) {
    if (attempt > 0)
      await new Promise((r) => setTimeout(r, nextDelay(attempt, { retries, baseMs: CALL_RETRY_BASE_MS }, random)));
    try {
      const result = await once(egress, slot, request, signal);
      if (!request.throwHttpErrors || result.status < 400) return { ok: true, result };
      error = {
        name: 'HttpError',
        message: `Call ${request.method} ${request.url} responded ${result.status} (attempt ${attempt + 1}/${retries + 1}).`,
      };
    } catch (cause) {
      const timedOut =
        cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError') && !signal.aborted;
      error = timedOut
        ? {
            name: 'TimeoutError',
            message: `Call ${request.method} ${request.url} took longer than ${request.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS} ms (attempt ${attempt + 1}/${retries + 1}).`,
          }
        : {
            ...serializeError(cause),
            message: `Call ${request.method} ${request.url} failed (attempt ${attempt + 1}/${retries + 1}): ${(cause as Error).message}`,
          };
      // A destination the rule refuses is refused again: no retry.
      if (cause instanceof Error && findRefusal(cause)) break;
    }
  }
  return { ok: false, error };
}

/** An `EgressRefusedError` in `error`'s cause chain (undici wraps what the connector reports). */
function findRefusal(error: unknown): boolean {
  for (
    let current: unknown = error, depth = 0;
    depth < 4 && current instanceof Error;
    depth++, current = current.cause
  ) {
    if ((current as { code?: unknown }).code === 'EGRESS_REFUSED') return true;
  }
  return false;
}
