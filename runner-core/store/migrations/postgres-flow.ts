/**
 * Flow control on PostgreSQL: the same columns as the SQLite migration (rows.ts maps both). The
 * index serves the per-key counts the claim makes while it holds the key's advisory lock.
 */
export const PG_MIGRATION_FLOW = `
  ALTER TABLE runs ADD COLUMN flow_key TEXT;
  ALTER TABLE runs ADD COLUMN flow_parallelism INTEGER;
  ALTER TABLE runs ADD COLUMN flow_rate INTEGER;
  ALTER TABLE runs ADD COLUMN flow_period_ms BIGINT;
  ALTER TABLE runs ADD COLUMN flow_started_at BIGINT;
  ALTER TABLE runs ADD COLUMN flow_wait_until BIGINT;
  ALTER TABLE runs ADD COLUMN flow_wait_reason TEXT;
  CREATE INDEX runs_flow ON runs (flow_key, flow_started_at) WHERE flow_key IS NOT NULL;
`;
