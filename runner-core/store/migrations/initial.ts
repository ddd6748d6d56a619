import type { Migration } from './dialect.js';

/**
 * 1: runs, their steps and the log of drive attempts. Statuses are plain text without CHECK
 * constraints on purpose: adding a status later would otherwise need a table rebuild in SQLite.
 * The TypeScript types guard the values.
 */
export const initial: Migration = (d) => `
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    status TEXT NOT NULL,
    body TEXT NOT NULL,
    headers TEXT NOT NULL,
    created_at ${d.ms} NOT NULL,
    updated_at ${d.ms} NOT NULL,
    finished_at ${d.ms},
    next_at ${d.ms},
    failures INTEGER NOT NULL DEFAULT 0,
    retries INTEGER NOT NULL,
    retry_delay_ms ${d.ms} NOT NULL,
    steps_done INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    output TEXT,
    error TEXT,
    idempotency_key TEXT UNIQUE,
    lease_owner TEXT,
    lease_until ${d.ms}
  );

  -- The scheduler only ever looks at unfinished runs; finished ones stay out of this index.
  CREATE INDEX runs_due ON runs (next_at) WHERE status NOT IN ('completed', 'failed', 'cancelled');
  CREATE INDEX runs_status ON runs (status, id);

  CREATE TABLE steps (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    output TEXT,
    error TEXT,
    started_at ${d.ms} NOT NULL,
    finished_at ${d.ms},
    duration_ms ${d.fraction},
    executions INTEGER NOT NULL DEFAULT 1,
    failures INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, idx)
  );

  CREATE TABLE attempts (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    started_at ${d.ms} NOT NULL,
    duration_ms ${d.fraction} NOT NULL,
    request_url TEXT NOT NULL,
    request_headers TEXT NOT NULL,
    request_body TEXT NOT NULL,
    response_status INTEGER,
    response_headers TEXT,
    response_body TEXT,
    outcome TEXT NOT NULL,
    error TEXT,
    PRIMARY KEY (run_id, seq)
  );
`;
