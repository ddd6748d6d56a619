import type { Migration } from './dialect.js';

/**
 * 5: flow control: a run's key and limits; when it was first driven (for `rate`); and until when a
 * claim that found its key full leaves it alone (so the scheduler's timer does not spin on it), and
 * why. The index serves the per-key counts a claim makes (on PostgreSQL under the key's advisory lock).
 */
export const flowControl: Migration = (d) => `
  ALTER TABLE runs ADD COLUMN flow_key TEXT;
  ALTER TABLE runs ADD COLUMN flow_parallelism INTEGER;
  ALTER TABLE runs ADD COLUMN flow_rate INTEGER;
  ALTER TABLE runs ADD COLUMN flow_period_ms ${d.ms};
  ALTER TABLE runs ADD COLUMN flow_started_at ${d.ms};
  ALTER TABLE runs ADD COLUMN flow_wait_until ${d.ms};
  ALTER TABLE runs ADD COLUMN flow_wait_reason TEXT;
  CREATE INDEX runs_flow ON runs (flow_key, flow_started_at) WHERE flow_key IS NOT NULL;
`;
