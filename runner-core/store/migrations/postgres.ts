import { PG_MIGRATION_SCHEDULES } from './postgres-schedules.js';
import type { Sql } from 'postgres';
import { PG_FUNCTIONS } from '../postgres-functions.js';
import { PG_MIGRATION_2 } from './postgres-2.js';
import { PG_MIGRATION_FLOW } from './postgres-flow.js';
import { PG_MIGRATION_STEP_LOGS } from './postgres-step-logs.js';
import { PG_MIGRATION_ALERTS } from './postgres-alerts.js';
import { PG_MIGRATION_SEARCH } from './postgres-search.js';
import { PG_MIGRATION_QSTASH } from './postgres-qstash.js';
import { PG_MIGRATION_QSTASH_WAITS } from './postgres-qstash-waits.js';
import { MIGRATION_SCHEDULE_REFUSALS } from './schedule-refusals.js';
import { PG_MIGRATION_RETENTION } from './postgres-retention.js';
import { PG_MIGRATION_DELIVERY_SCHEDULES } from './postgres-delivery-schedules.js';

/**
 * Ordered schema migrations of the PostgreSQL store; `wfkit_migrations` holds one row per applied
 * entry. Append only: never edit an entry that has shipped.
 *
 * The same tables and column names as SQLite (migrations.ts), so one row mapping serves both
 * (rows.ts). Times are epoch milliseconds in BIGINT; JSON stays TEXT, as written; statuses
 * are TEXT without CHECK constraints, for the same reason as in SQLite. `steps.duration_ms` is
 * DOUBLE PRECISION: routes measure steps with `performance.now()`, to fractions of a millisecond.
 * The writes are server-side functions (postgres-functions.ts), created with the tables.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    status TEXT NOT NULL,
    body TEXT NOT NULL,
    headers TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    finished_at BIGINT,
    next_at BIGINT,
    failures INTEGER NOT NULL DEFAULT 0,
    retries INTEGER NOT NULL,
    retry_delay_ms BIGINT NOT NULL,
    steps_done INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    output TEXT,
    error TEXT,
    idempotency_key TEXT UNIQUE,
    lease_owner TEXT,
    lease_until BIGINT
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
    started_at BIGINT NOT NULL,
    finished_at BIGINT,
    duration_ms DOUBLE PRECISION,
    executions INTEGER NOT NULL DEFAULT 1,
    failures INTEGER NOT NULL DEFAULT 0,
    group_id INTEGER,
    until BIGINT,
    event_id TEXT,
    request TEXT,
    PRIMARY KEY (run_id, idx)
  );
  -- notify finds the waiting steps of an event id without a scan.
  CREATE INDEX steps_waiting ON steps (event_id) WHERE event_id IS NOT NULL AND status = 'running';

  CREATE TABLE attempts (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    started_at BIGINT NOT NULL,
    duration_ms DOUBLE PRECISION NOT NULL,
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

  -- Events notified while nobody waited, kept for a wait registered shortly after.
  CREATE TABLE events (
    seq BIGSERIAL PRIMARY KEY,
    event_id TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    keep_until BIGINT NOT NULL
  );
  CREATE INDEX events_by_id ON events (event_id, seq);
  ` + PG_FUNCTIONS,
  PG_MIGRATION_2,
  PG_MIGRATION_SCHEDULES,
  PG_MIGRATION_FLOW,
  PG_MIGRATION_STEP_LOGS,
  PG_MIGRATION_ALERTS,
  PG_MIGRATION_SEARCH,
  PG_MIGRATION_QSTASH,
  PG_MIGRATION_QSTASH_WAITS,
  MIGRATION_SCHEDULE_REFUSALS,
  PG_MIGRATION_RETENTION,
  PG_MIGRATION_DELIVERY_SCHEDULES,
];

/**
 * Brings the schema up to date in one transaction, under a transaction-scoped advisory lock keyed
 * by the schema's name: when many runners start at the same moment, one migrates and the others
 * wait on the lock, then find nothing left to do. (`CREATE … IF NOT EXISTS` alone is not enough:
 * two of them racing can still fail on a catalog unique index.) DDL is transactional in
 * PostgreSQL, so a failed migration leaves nothing half-applied.
 *
 * `sql` must have `search_path` set to `schema` (the store's connections do).
 *
 * @example
 * await migratePostgres(sql, 'wfkit');
 */
export async function migratePostgres(sql: Sql<any>, schema: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${`wfkit.migrate.${schema}`}))`;
    await tx`CREATE SCHEMA IF NOT EXISTS ${tx(schema)}`;
    await tx`CREATE TABLE IF NOT EXISTS wfkit_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`;
    const [row] = await tx<{ version: number }[]>`SELECT COALESCE(MAX(version), 0)::int AS version FROM wfkit_migrations`;
    const current = row?.version ?? 0;
    if (current > PG_MIGRATIONS.length) {
      throw new Error(
        `Expected the PostgreSQL schema "${schema}" to be at version ${PG_MIGRATIONS.length} at most, got ${current}: it was written by a newer wfkit.`,
      );
    }
    for (let index = current; index < PG_MIGRATIONS.length; index++) {
      await tx.unsafe(PG_MIGRATIONS[index] ?? '');
      await tx`INSERT INTO wfkit_migrations (version) VALUES (${index + 1})`;
    }
  });
}
