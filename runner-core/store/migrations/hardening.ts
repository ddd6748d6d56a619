import type { Migration } from './dialect.js';

/**
 * 3: hardening. An outage of the app is tracked apart from a step's failures
 * (`unreachable_since`); a failed run stays claimable until its failureFunction call is delivered
 * (`failure_call`, `failure_call_attempts`, and the partial index `runs_claimable` replacing
 * `runs_due`); `executions` is named for what it counts (`reported_executions`: starts the
 * runner saw).
 */
export const hardening: Migration = (d) => `
  ALTER TABLE runs ADD COLUMN unreachable_since ${d.ms};
  ALTER TABLE runs ADD COLUMN failure_call TEXT;
  ALTER TABLE runs ADD COLUMN failure_call_attempts INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE steps RENAME COLUMN executions TO reported_executions;
  DROP INDEX runs_due;
  -- The predicate is CLAIMABLE (claimable.ts) spelled out: a shipped migration never changes.
  CREATE INDEX runs_claimable ON runs (next_at) WHERE (status NOT IN ('completed', 'failed', 'cancelled') OR failure_call = 'pending');
`;
