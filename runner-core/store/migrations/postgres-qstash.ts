/** QStash-protocol runs and messages on PostgreSQL: the same tables as sqlite-migration-qstash.ts. */
export const PG_MIGRATION_QSTASH = `
  ALTER TABLE runs ADD COLUMN protocol TEXT;
  CREATE TABLE qstash_runs (
    run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    config TEXT NOT NULL
  );
  CREATE TABLE qstash_messages (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    run_id TEXT REFERENCES runs (id) ON DELETE CASCADE,
    call_type TEXT,
    kind TEXT NOT NULL,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    due_at BIGINT NOT NULL,
    retried INTEGER NOT NULL DEFAULT 0,
    unreachable_since BIGINT,
    lease_owner TEXT,
    lease_until BIGINT,
    dedup_key TEXT UNIQUE,
    flow_key TEXT,
    flow_parallelism INTEGER,
    flow_rate INTEGER,
    flow_period_ms BIGINT,
    flow_started_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
  );
  CREATE INDEX qstash_messages_due ON qstash_messages (due_at) WHERE status = 'pending';
  CREATE INDEX qstash_messages_flow ON qstash_messages (flow_key, flow_started_at) WHERE flow_key IS NOT NULL;
  CREATE INDEX qstash_messages_run ON qstash_messages (run_id, seq) WHERE run_id IS NOT NULL;
`;
