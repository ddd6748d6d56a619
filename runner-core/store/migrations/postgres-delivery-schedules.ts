import { PG_MIGRATION_ALERTS } from './postgres-alerts.js';

/** The run patch line of `wfkit_apply` that the two schedule lines follow. */
const LAST_PATCH_LINE = "alert_attempts = CASE WHEN p ? 'alertAttempts' THEN (p->>'alertAttempts')::int ELSE alert_attempts END,";

/**
 * `wfkit_apply` as the alerts migration shipped it, plus the two schedule fields of the run patch.
 * Derived from that shipped text (which never changes) rather than copied, so the function exists
 * in one spelling; a later migration replacing `wfkit_apply` starts from this one.
 */
function applyWithSchedules(): string {
  const shipped = PG_MIGRATION_ALERTS.slice(PG_MIGRATION_ALERTS.indexOf('CREATE OR REPLACE FUNCTION wfkit_apply'));
  if (!shipped.includes(LAST_PATCH_LINE)) throw new Error('Expected the alerts migration to define wfkit_apply with the alertAttempts patch line.');
  return shipped.replace(
    LAST_PATCH_LINE,
    `${LAST_PATCH_LINE}
          failure_call_next_at = CASE WHEN p ? 'failureCallNextAt' THEN (p->>'failureCallNextAt')::bigint ELSE failure_call_next_at END,
          alert_next_at = CASE WHEN p ? 'alertNextAt' THEN (p->>'alertNextAt')::bigint ELSE alert_next_at END,`,
  );
}

/**
 * The same as SQLite's (sqlite-migration-delivery-schedules.ts): a failed run's failureFunction call
 * and its alert each have their own next try; `next_at` stays what claims read (the earlier one).
 */
export const PG_MIGRATION_DELIVERY_SCHEDULES = `
  ALTER TABLE runs ADD COLUMN failure_call_next_at BIGINT;
  ALTER TABLE runs ADD COLUMN alert_next_at BIGINT;
  UPDATE runs SET failure_call_next_at = next_at WHERE failure_call = 'pending';
  UPDATE runs SET alert_next_at = next_at WHERE alert = 'pending';
  ${applyWithSchedules()}`;
