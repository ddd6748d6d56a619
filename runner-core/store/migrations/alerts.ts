import type { Migration } from './dialect.js';

/**
 * 7: failure alerts (runner-core/alerts/): a failed run stays claimable until its alert to the
 * runner's webhook is delivered (`alert`, `alert_attempts`), as it does for its failureFunction
 * call, so the claim index `runs_claimable` is rebuilt with CLAIMABLE's new predicate spelled out
 * (claimable.ts; a shipped migration never changes, so this one carries its own copy).
 */
export const alerts: Migration = () => `
  ALTER TABLE runs ADD COLUMN alert TEXT;
  ALTER TABLE runs ADD COLUMN alert_attempts INTEGER NOT NULL DEFAULT 0;
  DROP INDEX runs_claimable;
  CREATE INDEX runs_claimable ON runs (next_at) WHERE (status NOT IN ('completed', 'failed', 'cancelled') OR failure_call = 'pending' OR alert = 'pending');
`;
