/**
 * Schedules: the last tick the runner refused to fire (its route's origin no longer allowed), as
 * JSON (`ScheduleRefusal`); cleared when a tick fires. Same statement for SQLite and PostgreSQL.
 */
export const MIGRATION_SCHEDULE_REFUSALS = `
  ALTER TABLE schedules ADD COLUMN last_refusal TEXT;
`;
