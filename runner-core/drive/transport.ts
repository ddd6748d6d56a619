import { EndpointTimeoutError } from '../errors.js';

/**
 * Socket and DNS error codes (node's and undici's) that say the app did not answer, not that a step
 * failed: the request never arrived, or its answer never came back whole.
 */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EADDRNOTAVAIL',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/**
 * 502/503/504: a proxy or platform in front of the app says the app is down, overloaded or slow.
 * 408: the route got the drive after its signed deadline (it was slow to arrive, or the clocks
 * disagree): a delay on the way, not the step's failure.
 */
export const UNREACHABLE_STATUSES: ReadonlySet<number> = new Set([408, 502, 503, 504]);

/**
 * True when `error` (thrown while sending a drive request or reading its answer) means the app could
 * not be reached: a refused or reset connection, a DNS failure, a timeout. Looks through `cause`
 * chains (undici wraps socket errors; fetch-style errors wrap them too), at most a few levels deep.
 * @example isUnreachable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })) // true
 */
export function isUnreachable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if (current instanceof EndpointTimeoutError) return true;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    // AggregateError (happy-eyeballs: every address refused) carries its causes in `errors`.
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0 && errors.every((e) => isUnreachable(e))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
