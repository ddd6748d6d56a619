import { toMilliseconds, type Duration } from '../../../protocol/duration.js';
import { WorkflowError } from '../../../protocol/errors.js';
import type { SuspendTools } from './types.js';

export interface SleepMethods {
  /**
   * Pauses the run: the request ends and the runner wakes it later (restarts included).
   * @example await context.sleep("cool-down", "10m");
   */
  sleep(name: string, duration: Duration): Promise<void>;
  /** Pauses the run until a time (Date, epoch ms, or a date string). */
  sleepUntil(name: string, time: Date | number | string): Promise<void>;
}

/** Epoch ms of `sleepUntil`'s argument. */
export function toEpochMs(time: Date | number | string, name: string): number {
  const ms = time instanceof Date ? time.getTime() : typeof time === 'number' ? time : Date.parse(time);
  if (!Number.isFinite(ms)) {
    throw new WorkflowError(
      'CONFIG',
      `Expected the time of sleepUntil "${name}" to be a Date, epoch milliseconds or a date string, got ${JSON.stringify(time)}.`,
    );
  }
  return ms;
}

export const sleepMethods = (tools: SuspendTools): SleepMethods => ({
  sleep: (name, duration) =>
    tools.suspend('sleep', name, () => ({
      until: tools.clock() + toMilliseconds(duration, `the duration of sleep "${name}"`),
    })) as Promise<void>,
  sleepUntil: (name, time) => tools.suspend('sleep', name, () => ({ until: toEpochMs(time, name) })) as Promise<void>,
});
