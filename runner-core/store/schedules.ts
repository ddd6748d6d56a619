import type { Schedule } from '../../api/schedule-dto.js';
export type { Schedule } from '../../api/schedule-dto.js';

/** Schedules: cron ticks that start runs (runner-core/schedules/ticker.ts fires them). */
export interface ScheduleStore {
  createSchedule(schedule: Schedule): Promise<void>;
  listSchedules(): Promise<Schedule[]>;
  getSchedule(id: string): Promise<Schedule | undefined>;
  /** False when there was no such schedule. */
  deleteSchedule(id: string): Promise<boolean>;
  /** Schedules whose `nextAt` is due at `now`, oldest tick first, at most `limit`. */
  dueSchedules(now: number, limit: number): Promise<Schedule[]>;
  /**
   * Moves a schedule from the tick `from` to `nextAt` and records `firedAt`, only if its `nextAt`
   * is still `from` (compare-and-set: of two runners firing one tick, one advances it).
   */
  advanceSchedule(id: string, from: number, nextAt: number, firedAt: number): Promise<boolean>;
}
