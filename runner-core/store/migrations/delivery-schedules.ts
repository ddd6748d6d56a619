import type { Migration } from './dialect.js';

/**
 * 13: a failed run's failureFunction call and its alert are independent deliveries (run-end/), each
 * on its own schedule: `failure_call_next_at` and `alert_next_at` say when each is tried next, and
 * the run's `next_at` (what claims read) is the earlier of the owed ones. Runs owing one when this
 * migration runs keep their `next_at` as its schedule.
 */
export const deliverySchedules: Migration = (d) => `
  ALTER TABLE runs ADD COLUMN failure_call_next_at ${d.ms};
  ALTER TABLE runs ADD COLUMN alert_next_at ${d.ms};
  UPDATE runs SET failure_call_next_at = next_at WHERE failure_call = 'pending';
  UPDATE runs SET alert_next_at = next_at WHERE alert = 'pending';
`;
