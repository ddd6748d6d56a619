import type { Migration } from './dialect.js';

/**
 * 11: the last tick the runner refused to fire for a schedule (its route's origin no longer
 * allowed), as JSON (`ScheduleRefusal`); cleared when a tick fires.
 */
export const scheduleRefusals: Migration = () => `
  ALTER TABLE schedules ADD COLUMN last_refusal TEXT;
`;
