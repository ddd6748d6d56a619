import ms from 'ms';
import { WorkflowError } from './errors.js';

/** A duration: a number of `unit`s, or a string such as "500ms", "10s", "5m", "2h", "1d". */
export type Duration = number | string;

/**
 * Milliseconds of a duration. Numbers count `unit` (seconds for sleeps and timeouts); strings
 * are read by `ms`. Throws a non-retryable `WorkflowError` naming `what` on anything else.
 * @example toMilliseconds("5m", "the sleep") // 300000
 */
export function toMilliseconds(value: Duration, what: string, unit: 'seconds' | 'milliseconds' = 'seconds'): number {
  const result =
    typeof value === 'number'
      ? unit === 'seconds'
        ? value * 1000
        : value
      : typeof value === 'string'
        ? ms(value as ms.StringValue)
        : Number.NaN;
  if (typeof result !== 'number' || !Number.isFinite(result) || result < 0) {
    throw new WorkflowError(
      'CONFIG',
      `Expected ${what} to be a number of ${unit} or a string like "10s", "5m" or "1d", got ${JSON.stringify(value)}.`,
    );
  }
  return Math.round(result);
}
