import { InvalidArgumentError, Option } from 'commander';
import ms from 'ms';

const DAY = 86_400_000;

/** How long `wf start` keeps finished runs, and `wf dev` (a laptop's database stays small). */
export const START_RETENTION_MS = 30 * DAY;
export const DEV_RETENTION_MS = 7 * DAY;

/**
 * A retention period: a duration with its unit (`30d`, `12h`, `90m`, `45s`), or `0`. A bare number
 * other than 0 is refused: `--retention 30` meant days to some and milliseconds to others.
 * @example parseRetention('30d') // 2592000000
 */
export function parseRetention(value: string, flag = '--retention', zero = 'keep finished runs forever'): number {
  const text = value.trim();
  if (/^0+$/.test(text)) return 0;
  const result = /^\d+(\.\d+)?\s*[a-z]+$/i.test(text) ? ms(text as ms.StringValue) : undefined;
  if (typeof result !== 'number' || !Number.isFinite(result) || result < 1) {
    throw new InvalidArgumentError(
      `Expected ${flag} to be a duration with its unit, like 30d, 12h or 90m (or 0 to ${zero}), got "${value}".`,
    );
  }
  return Math.round(result);
}

/** `--retention <duration>`, for `wf start` and `wf dev` with their own defaults. */
export function retentionOption(defaultMs: number): Option {
  return new Option(
    '--retention <duration>',
    'delete finished runs (with their steps, attempts, logs and QStash messages) this long after they finished; 0 keeps them forever',
  )
    .argParser((value) => parseRetention(value))
    .default(defaultMs, ms(defaultMs, { long: false }));
}
