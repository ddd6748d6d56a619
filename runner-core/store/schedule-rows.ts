import type { Schedule, ScheduleRefusal } from './schedules.js';

/** A `schedules` row, as both dialects store it (headers as JSON text; times epoch ms). */
export interface ScheduleRow {
  id: string;
  url: string;
  cron: string;
  timezone: string;
  body: string;
  headers: string;
  next_at: number;
  last_fired_at: number | null;
  created_at: number;
  /** JSON of `ScheduleRefusal`, or null. */
  last_refusal: string | null;
}

export function toSchedule(row: ScheduleRow): Schedule {
  return {
    id: row.id,
    url: row.url,
    cron: row.cron,
    timezone: row.timezone,
    body: row.body,
    headers: JSON.parse(row.headers) as Record<string, string>,
    nextAt: Number(row.next_at),
    lastFiredAt: row.last_fired_at === null ? null : Number(row.last_fired_at),
    createdAt: Number(row.created_at),
    lastRefusal: row.last_refusal === null ? null : (JSON.parse(row.last_refusal) as ScheduleRefusal),
  };
}

export function scheduleRow(s: Schedule): ScheduleRow {
  return {
    id: s.id,
    url: s.url,
    cron: s.cron,
    timezone: s.timezone,
    body: s.body,
    headers: JSON.stringify(s.headers),
    next_at: s.nextAt,
    last_fired_at: s.lastFiredAt,
    created_at: s.createdAt,
    last_refusal: s.lastRefusal === null ? null : JSON.stringify(s.lastRefusal),
  };
}
