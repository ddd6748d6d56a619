/**
 * Resume (`RunStore.resumeRun`) in both stores' words: which runs it takes, and what it clears
 * besides making the run `queued` and due (its end, its failures, the failureFunction call and
 * alert it owed, and its lease, so whichever runner claims it next drives it).
 */
export const RESUMABLE = `status IN ('failed', 'cancelled')`;

export const RESUME_CLEARS = `finished_at = NULL, output = NULL, error = NULL, failures = 0, unreachable_since = NULL,
  failure_call = NULL, failure_call_attempts = 0, alert = NULL, alert_attempts = 0,
  lease_owner = NULL, lease_until = NULL`;
