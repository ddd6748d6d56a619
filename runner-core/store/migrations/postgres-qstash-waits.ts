/** Upstash-protocol waits and kept events on PostgreSQL: the same tables as the SQLite migration. */
export const PG_MIGRATION_QSTASH_WAITS = `
  CREATE TABLE qstash_waits (
    run_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    step_id INTEGER NOT NULL,
    waiter TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    deadline BIGINT NOT NULL,
    fire_until BIGINT,
    PRIMARY KEY (run_id, event_id, step_id)
  );
  CREATE INDEX qstash_waits_event ON qstash_waits (event_id);
  CREATE INDEX qstash_waits_deadline ON qstash_waits (deadline);

  CREATE TABLE qstash_kept_events (
    seq BIGSERIAL PRIMARY KEY,
    run_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    keep_until BIGINT NOT NULL
  );
  CREATE INDEX qstash_kept_events_key ON qstash_kept_events (run_id, event_id, seq);
  CREATE INDEX qstash_kept_events_until ON qstash_kept_events (keep_until);
`;
