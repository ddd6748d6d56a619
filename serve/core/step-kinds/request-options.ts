import { WorkflowError } from '../../../protocol/errors.js';

/**
 * The options `context.call` and `context.invoke` share, checked and encoded alike, so a request
 * step sends its body and refuses a bad `retries` the same way whichever kind it is.
 */

/** A request body as sent: a string as is, anything else as JSON (`content-type` added to `headers` unless set). */
export function encodeBody(body: unknown, headers: Record<string, string>): string {
  if (typeof body === 'string') return body;
  const json = JSON.stringify(body);
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';
  return json;
}

/** A step's `retries` option: a non-negative integer, else a `CONFIG` error naming the step. */
export function checkRetries(retries: number, where: string): number {
  if (!Number.isInteger(retries) || retries < 0) {
    throw new WorkflowError(
      'CONFIG',
      `Expected \`retries\` of ${where} to be a non-negative integer, got ${String(retries)}.`,
    );
  }
  return retries;
}
