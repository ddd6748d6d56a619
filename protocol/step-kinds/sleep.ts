import { expectNumber } from '../validate.js';
import type { ParseSuspension } from './types.js';

/** `context.sleep` / `sleepUntil`: the runner wakes the run at `until` (epoch ms). */
export interface SleepSuspension {
  until: number;
}

export const parseSleep: ParseSuspension<SleepSuspension> = (o, where) => ({ until: expectNumber(o, 'until', where) });
