import type { Migration } from './dialect.js';

/**
 * 9: QStash-protocol runs (runner-core/qstash/): a run started through `/v2/…` is a row of `runs`
 * marked `protocol = 'upstash'` (its `next_at` stays NULL, so the native scheduler never claims it),
 * its run-wide settings in `qstash_runs`, and every message published for it (or for anyone) in
 * `qstash_messages`: delivered by any runner holding its lease, retried with its own policy.
 * `seq` orders a run's messages: a delivery carries the run's messages up to its own.
 */
export const qstash: Migration = (d) => `
  ALTER TABLE runs ADD COLUMN protocol TEXT;
  CREATE TABLE qstash_runs (
    run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    config TEXT NOT NULL
  );
  CREATE TABLE qstash_messages (
    seq ${d.serial},
    id TEXT NOT NULL UNIQUE,
    run_id TEXT REFERENCES runs (id) ON DELETE CASCADE,
    call_type TEXT,
    kind TEXT NOT NULL,
    spec TEXT NOT NULL,
    status TEXT NOT NULL,
    due_at ${d.ms} NOT NULL,
    retried INTEGER NOT NULL DEFAULT 0,
    unreachable_since ${d.ms},
    lease_owner TEXT,
    lease_until ${d.ms},
    dedup_key TEXT UNIQUE,
    flow_key TEXT,
    flow_parallelism INTEGER,
    flow_rate INTEGER,
    flow_period_ms ${d.ms},
    flow_started_at ${d.ms},
    created_at ${d.ms} NOT NULL,
    updated_at ${d.ms} NOT NULL
  );
  CREATE INDEX qstash_messages_due ON qstash_messages (due_at) WHERE status = 'pending';
  CREATE INDEX qstash_messages_flow ON qstash_messages (flow_key, flow_started_at) WHERE flow_key IS NOT NULL;
  CREATE INDEX qstash_messages_run ON qstash_messages (run_id, seq) WHERE run_id IS NOT NULL;
`;
