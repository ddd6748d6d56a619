import type { Schedule, ScheduleRefusal } from '../../api/schedule-dto.js';
import type { RunPage } from './records.js';
export type { Schedule, ScheduleRefusal } from '../../api/schedule-dto.js';

/** Schedules: cron ticks that start runs (runner-core/schedules/service.ts fires them). */
export interface ScheduleStore {
  createSchedule(schedule: Schedule): Promise<void>;
  listSchedules(): Promise<Schedule[]>;
  getSchedule(id: string): Promise<Schedule | undefined>;
  /** False when there was no such schedule. */
  deleteSchedule(id: string): Promise<boolean>;
  /** Schedules whose `nextAt` is due at `now`, oldest tick first, at most `limit`. */
  dueSchedules(now: number, limit: number): Promise<Schedule[]>;
  /**
   * Moves a schedule from the tick `from` to `nextAt` and records `firedAt` (clearing a refusal),
   * only if its `nextAt` is still `from` (compare-and-set: of two runners firing one tick, one advances it).
   */
  advanceSchedule(id: string, from: number, nextAt: number, firedAt: number): Promise<boolean>;
  /** Skips the refused tick `from`: moves to `nextAt` and records `refusal`, compare-and-set as `advanceSchedule`. */
  refuseTick(id: string, from: number, nextAt: number, refusal: ScheduleRefusal): Promise<boolean>;
  /** The runs a schedule started (their idempotency key names it), newest first, paged like `listRuns`. */
  listScheduleRuns(scheduleId: string, query: { cursor?: string; limit?: number }): Promise<RunPage>;
}

/** The idempotency-key range of a schedule's runs: `schedule:<id>:` up to `schedule:<id>;` (';' follows ':'). */
export function scheduleKeyRange(scheduleId: string): { from: string; to: string } {
  return { from: `schedule:${scheduleId}:`, to: `schedule:${scheduleId};` };
}
