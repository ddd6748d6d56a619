import type { Database } from 'better-sqlite3';
import { SQLITE_MIGRATION_STEP_LOGS } from './sqlite-step-logs.js';
import { SQLITE_MIGRATION_ALERTS } from './sqlite-alerts.js';
import { SQLITE_MIGRATION_SEARCH } from './sqlite-search.js';
import { SQLITE_MIGRATION_QSTASH } from './sqlite-qstash.js';
import { SQLITE_MIGRATION_QSTASH_WAITS } from './sqlite-qstash-waits.js';
import { MIGRATION_SCHEDULE_REFUSALS } from './schedule-refusals.js';
import { SQLITE_MIGRATION_RETENTION } from './sqlite-retention.js';
import { SQLITE_MIGRATION_DELIVERY_SCHEDULES } from './sqlite-delivery-schedules.js';

/**
 * Ordered schema migrations. `PRAGMA user_version` holds how many have been applied, so entry `i`
 * runs exactly once per database file. Append only: never edit an entry that has shipped.
 *
 * Statuses are plain text without CHECK constraints on purpose: adding a status later would
 * otherwise need a table rebuild in SQLite. The TypeScript types guard the values.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    status TEXT NOT NULL,
    body TEXT NOT NULL,
    headers TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    next_at INTEGER,
    failures INTEGER NOT NULL DEFAULT 0,
    retries INTEGER NOT NULL,
    retry_delay_ms INTEGER NOT NULL,
    steps_done INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    output TEXT,
    error TEXT,
    idempotency_key TEXT UNIQUE,
    lease_owner TEXT,
    lease_until INTEGER
  );

  -- The scheduler only ever looks at unfinished runs; finished ones stay out of this index.
  CREATE INDEX runs_due ON runs(next_at) WHERE status NOT IN ('completed', 'failed', 'cancelled');
  CREATE INDEX runs_status ON runs(status, id);

  CREATE TABLE steps (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    output TEXT,
    error TEXT,
    started_at INTEGER NOT NULL,
    finished_at INTEGER,
    duration_ms INTEGER,
    executions INTEGER NOT NULL DEFAULT 1,
    failures INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, idx)
  );

  CREATE TABLE attempts (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
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
  `,
  // 2: the whole workflow API: parallel groups, sleeps, event waits, HTTP calls, kept events.
  `
  ALTER TABLE steps ADD COLUMN group_id INTEGER;
  ALTER TABLE steps ADD COLUMN until INTEGER;
  ALTER TABLE steps ADD COLUMN event_id TEXT;
  ALTER TABLE steps ADD COLUMN request TEXT;
  -- notify finds the waiting steps of an event id without a scan.
  CREATE INDEX steps_waiting ON steps(event_id) WHERE event_id IS NOT NULL AND status = 'running';

  -- Events notified while nobody waited, kept for a wait registered shortly after.
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    keep_until INTEGER NOT NULL
  );
  CREATE INDEX events_by_id ON events(event_id, seq);
  `,
  // 3: hardening. An outage of the app is tracked apart from the step's failures; a failed run
  // stays claimable until its failureFunction call is delivered; `executions` is named for what
  // it is (starts the runner saw).
  `
  ALTER TABLE runs ADD COLUMN unreachable_since INTEGER;
  ALTER TABLE runs ADD COLUMN failure_call TEXT;
  ALTER TABLE runs ADD COLUMN failure_call_attempts INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE steps RENAME COLUMN executions TO reported_executions;
  DROP INDEX runs_due;
  -- The predicate is CLAIMABLE (claimable.ts) spelled out: a shipped migration never changes.
  CREATE INDEX runs_claimable ON runs(next_at) WHERE (status NOT IN ('completed', 'failed', 'cancelled') OR failure_call = 'pending');
  `,  // Schedules: cron ticks that start runs (runner-core/schedules/). Headers are stored redacted.
  `
  CREATE TABLE schedules (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    cron TEXT NOT NULL,
    timezone TEXT NOT NULL,
    body TEXT NOT NULL,
    headers TEXT NOT NULL,
    next_at INTEGER NOT NULL,
    last_fired_at INTEGER,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX schedules_due ON schedules(next_at);
  `,
  // flow control: a run's key and limits; when it was first driven (for `rate`); and until when a
  // claim that found its key full leaves it alone (so the scheduler's timer does not spin on it), and why.
  `
  ALTER TABLE runs ADD COLUMN flow_key TEXT;
  ALTER TABLE runs ADD COLUMN flow_parallelism INTEGER;
  ALTER TABLE runs ADD COLUMN flow_rate INTEGER;
  ALTER TABLE runs ADD COLUMN flow_period_ms INTEGER;
  ALTER TABLE runs ADD COLUMN flow_started_at INTEGER;
  ALTER TABLE runs ADD COLUMN flow_wait_until INTEGER;
  ALTER TABLE runs ADD COLUMN flow_wait_reason TEXT;
  CREATE INDEX runs_flow ON runs(flow_key, flow_started_at) WHERE flow_key IS NOT NULL;
  `,
  SQLITE_MIGRATION_STEP_LOGS,
  SQLITE_MIGRATION_ALERTS,
  // finding runs: indexes for the run list's filters.
  SQLITE_MIGRATION_SEARCH,
  SQLITE_MIGRATION_QSTASH,
  SQLITE_MIGRATION_QSTASH_WAITS,
  MIGRATION_SCHEDULE_REFUSALS,
  SQLITE_MIGRATION_RETENTION,
  SQLITE_MIGRATION_DELIVERY_SCHEDULES,
];

function userVersion(db: Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Brings the schema up to date, one transaction per migration.
 * Each transaction re-reads `user_version` under the write lock, so two processes opening the
 * same new file at once do not both run a migration.
 *
 * @example
 * migrate(new Database('.wf/dev.db'));
 */
export function migrate(db: Database): void {
  const current = userVersion(db);
  if (current > MIGRATIONS.length) {
    throw new Error(
      `Expected the database schema version to be at most ${MIGRATIONS.length}, got ${current}: it was written by a newer wfkit.`,
    );
  }
  const step = db.transaction((index: number) => {
    if (userVersion(db) !== index) return;
    db.exec(MIGRATIONS[index] ?? '');
    // PRAGMA does not take bound parameters; `index` is a loop counter, never user input.
    db.pragma(`user_version = ${index + 1}`);
  });
  for (let index = current; index < MIGRATIONS.length; index++) step.immediate(index);
}
