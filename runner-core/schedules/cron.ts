import { Cron } from 'croner';

/** A cron expression or time zone the cron library refused; the API answers 400 naming `field`. */
export class InvalidScheduleError extends Error {
  override name = 'InvalidScheduleError';
  readonly field: 'cron' | 'timezone';
  constructor(field: 'cron' | 'timezone', message: string) {
    super(message);
    this.field = field;
  }
}

/**
 * Refuses an expression of any field count but 5, or 6 with a leading seconds field, as README
 * promises. croner itself also reads a 7th (year) field and `@daily`-style nicknames; a schedule
 * stored before this check keeps ticking (`nextTick` does not check the count).
 * @example checkCronFields('0 9 * * 1-5') // ok; checkCronFields('0 0 9 * * 1-5 2030') throws
 */
export function checkCronFields(cron: string): void {
  const count = cron.trim().split(/\s+/).length;
  if (count === 5 || count === 6) return;
  throw new InvalidScheduleError(
    'cron',
    `Expected \`cron\` to have 5 fields, or 6 with a leading seconds field, got ${count} field${count === 1 ? '' : 's'}: "${cron}".`,
  );
}

/**
 * The first tick strictly after `after` (epoch ms), read in `timezone`. Validates as it goes: a
 * bad expression or zone throws `InvalidScheduleError` with croner's own message.
 * 5 fields, or 6 with a leading seconds field (croner's default reading).
 */
export function nextTick(cron: string, timezone: string, after: number): number {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch (error) {
    throw new InvalidScheduleError(
      'timezone',
      `Expected \`timezone\` to be an IANA time zone name, got "${timezone}": ${(error as Error).message}`,
    );
  }
  let job: Cron;
  try {
    job = new Cron(cron, { timezone, paused: true });
  } catch (error) {
    throw new InvalidScheduleError(
      'cron',
      `Expected \`cron\` to be a 5- or 6-field cron expression, got "${cron}": ${(error as Error).message}`,
    );
  }
  const next = job.nextRun(new Date(after));
  if (!next)
    throw new InvalidScheduleError(
      'cron',
      `Expected \`cron\` "${cron}" to have a next tick after ${new Date(after).toISOString()}, it has none.`,
    );
  return next.getTime();
}
