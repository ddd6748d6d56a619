import { ApiError } from '../errors.js';

/** Longest request target quoted back in an error message. */
const QUOTE_CHARS = 80;

function quote(text: string): string {
  const printable = text.replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify(printable.length > QUOTE_CHARS ? `${printable.slice(0, QUOTE_CHARS)}…` : printable);
}

/**
 * The request target as a URL. Node's parser passes targets such as `//[` or `http://[` that
 * `new URL` refuses; those are a 400, not a crash.
 * @example parseTarget('/v1/runs?limit=5').searchParams.get('limit'); // '5'
 */
export function parseTarget(target: string | undefined): URL {
  const text = target ?? '/';
  try {
    return new URL(text, 'http://runner');
  } catch (error) {
    throw new ApiError(400, 'BAD_REQUEST', `Expected a request target such as /v1/runs, got ${quote(text)}.`, {
      cause: error,
    });
  }
}

/** A %-encoded path segment, decoded; a malformed escape (`%ZZ`) is a 400 naming `what`. */
export function decodeSegment(segment: string, what: string): string {
  try {
    return decodeURIComponent(segment);
  } catch (error) {
    throw new ApiError(
      400,
      'BAD_REQUEST',
      `Expected ${what} in the path to be %-encoded UTF-8, got ${quote(segment)}.`,
      { cause: error },
    );
  }
}
