/** Retry policy of one run. */
export interface RetryPolicy {
  /** Retries after the first attempt. @default 3 */
  retries: number;
  /** Backoff base in ms: delays grow base, 2·base, 4·base… @default 1000 */
  baseMs: number;
  /** Ceiling of one delay. @default 1 hour */
  maxMs?: number;
}

export const DEFAULT_RETRIES = 3;
export const DEFAULT_RETRY_DELAY_MS = 1000;
/** No delay is longer, whoever asked for it (a `Retry-After` of a week is a bug, not a plan). */
export const MAX_DELAY_MS = 60 * 60 * 1000;

/**
 * Delay before retry number `failures` (1 = first retry): exponential with "equal jitter",
 * half fixed and half random, so retries of many runs failing together spread out.
 * @example nextDelay(3, { retries: 5, baseMs: 1000 }) // between 2000 and 4000
 */
export function nextDelay(failures: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const exponential = policy.baseMs * 2 ** Math.max(0, failures - 1);
  const capped = Math.min(exponential, policy.maxMs ?? MAX_DELAY_MS);
  return Math.round(capped / 2 + random() * (capped / 2));
}

/** `Retry-After` as ms: either delta-seconds or an HTTP date. Undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Every HTTP-date form has hh:mm:ss; without this check V8's lenient Date.parse reads "-5" or
  // "1.5" as dates in 2001, and garbage would mean "retry at once".
  if (!/\b\d{2}:\d{2}:\d{2}\b/.test(trimmed)) return undefined;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
