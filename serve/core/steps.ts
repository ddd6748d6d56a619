import { toMilliseconds, type Duration } from '../../protocol/duration.js';
import { WorkflowError } from '../../protocol/errors.js';
import type { CallRequest } from '../../protocol/messages.js';
import type { CallOptions } from './context.js';

/** Event waits give up after a week unless told otherwise (Upstash's default too). */
export const DEFAULT_WAIT_TIMEOUT: Duration = '7d';

/** The wire form of `context.call`'s options; a non-string body goes as JSON. */
export function toCallRequest(name: string, options: CallOptions): CallRequest {
  const where = `call "${name}"`;
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new WorkflowError('CONFIG', `Expected \`url\` of ${where} to be an absolute URL, got ${JSON.stringify(options.url)}.`);
  }
  const headers: Record<string, string> = { ...options.headers };
  const request: CallRequest = { url: url.href, method: (options.method ?? 'GET').toUpperCase(), headers };
  if (options.body !== undefined) {
    if (typeof options.body === 'string') request.body = options.body;
    else {
      request.body = JSON.stringify(options.body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    }
  }
  if (options.timeout !== undefined) request.timeoutMs = toMilliseconds(options.timeout, `\`timeout\` of ${where}`);
  if (options.retries !== undefined) {
    if (!Number.isInteger(options.retries) || options.retries < 0) {
      throw new WorkflowError('CONFIG', `Expected \`retries\` of ${where} to be a non-negative integer, got ${String(options.retries)}.`);
    }
    request.retries = options.retries;
  }
  if (options.throwHttpErrors) request.throwHttpErrors = true;
  return request;
}

/** Epoch ms of `sleepUntil`'s argument. */
export function toEpochMs(time: Date | number | string, name: string): number {
  const ms = time instanceof Date ? time.getTime() : typeof time === 'number' ? time : Date.parse(time);
  if (!Number.isFinite(ms)) {
    throw new WorkflowError('CONFIG', `Expected the time of sleepUntil "${name}" to be a Date, epoch milliseconds or a date string, got ${JSON.stringify(time)}.`);
  }
  return ms;
}

/** Races a step against its timeout; the timer never outlives the step. */
export async function withTimeout<T>(work: T | Promise<T>, timeoutMs: number | undefined, name: string): Promise<T> {
  if (timeoutMs === undefined) return work;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WorkflowError('TIMEOUT', `Step "${name}" took longer than its timeout of ${timeoutMs} ms.`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
