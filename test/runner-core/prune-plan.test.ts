import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../runner-core/store/postgres/store.js';
import { candidatesSql } from '../../runner-core/store/retention.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';

/**
 * Pruning finds its runs through the partial index `runs_finished` and each run's rows through
 * their keys: EXPLAIN on a store seeded with runs of every kind (as run-list-plan.test.ts does for
 * the run list). A plan that reads the whole table fails here.
 */

const RUNS = 3000;
const T0 = 1_700_000_000_000;
const STATUSES = ['completed', 'running', 'failed', 'queued', 'cancelled'];
const runId = (i: number): string => `wfr_${String(i).padStart(26, '0')}`;

function seedRuns(insert: (row: unknown[]) => void): void {
  for (let i = 0; i < RUNS; i++) {
    const status = STATUSES[i % STATUSES.length]!;
    const finished = ['completed', 'failed', 'cancelled'].includes(status) ? T0 + i * 1000 : null;
    insert([runId(i), 'http://app.test/wf', status, '{}', '{}', T0 + i * 1000, T0 + i * 1000, finished, 3, 1000]);
  }
}
const RUN_COLUMNS = [
  'id',
  'url',
  'status',
  'body',
  'headers',
  'created_at',
  'updated_at',
  'finished_at',
  'retries',
  'retry_delay_ms',
];

/** What a batch runs per run (../../runner-core/store/sqlite/retention.ts, the QStash stores) and what the foreign keys' cascade looks up. */
const PER_RUN = [
  'SELECT COUNT(*) FROM steps WHERE run_id = ?',
  'DELETE FROM attempts WHERE run_id = ?',
  'DELETE FROM step_logs WHERE run_id = ?',
  'DELETE FROM qstash_messages WHERE run_id = ?',
  'DELETE FROM qstash_runs WHERE run_id = ?',
  'DELETE FROM qstash_waits WHERE run_id = ?',
  'DELETE FROM qstash_kept_events WHERE run_id = ?',
  `SELECT 1 FROM qstash_messages WHERE run_id = ? AND status = 'pending' LIMIT 1`,
];

describe('pruning on SQLite', () => {
  let dir: string;
  let db: Database.Database;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wf-prune-plan-'));
    const path = join(dir, 'runs.db');
    await openSqliteStore(path).close();
    db = new Database(path);
    const insert = db.prepare(
      `INSERT INTO runs (${RUN_COLUMNS.join(', ')}) VALUES (${RUN_COLUMNS.map(() => '?').join(', ')})`,
    );
    // No ANALYZE: a runner's store never has statistics, and without them SQLite preferred runs_status.
    db.transaction(() => seedRuns((row) => insert.run(...row)))();
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const plan = (text: string, params: unknown[]): string =>
    (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as { detail: string }[])
      .map((row) => row.detail)
      .join('\n');

  it.each([false, true])('finds candidates in runs_finished, in its order (cursor: %s)', (withCursor) => {
    const text = plan(
      candidatesSql('sqlite', withCursor),
      withCursor ? [T0 + 2_000_000, T0 + 1000, runId(1), 200] : [T0 + 2_000_000, 200],
    );
    expect(text).toMatch(/SEARCH runs USING INDEX runs_finished/);
    expect(text).not.toMatch(/SCAN runs|TEMP B-TREE/);
  });

  it.each(PER_RUN)('%s: searches by key', (text) => {
    expect(plan(text, [runId(1)])).toMatch(/^SEARCH /m);
    expect(plan(text, [runId(1)])).not.toMatch(/SCAN /);
  });

  it('finds settled messages of no run in qstash_messages_settled', () => {
    const text = plan(
      `SELECT seq FROM qstash_messages WHERE run_id IS NULL AND status != 'pending' AND updated_at < ? ORDER BY updated_at LIMIT ?`,
      [T0, 200],
    );
    expect(text).toMatch(/SEARCH qstash_messages USING INDEX qstash_messages_settled/);
  });
});

describe('pruning on PostgreSQL', () => {
  let pg: PostgresCluster | undefined;
  let sql: postgres.Sql;
  beforeAll(async () => {
    pg = await startPostgres({ database: 'prune_plan' });
    await (await openPostgresStore(pg.url, { schema: 'plan' })).close();
    sql = postgres(pg.url, { onnotice: () => {}, connection: { search_path: 'plan' } });
    const rows: unknown[][] = [];
    seedRuns((row) => rows.push(row));
    const records = rows.map(
      (row) =>
        Object.fromEntries(RUN_COLUMNS.map((c, k) => [c, row[k]])) as Record<string, postgres.ParameterOrJSON<never>>,
    );
    for (let i = 0; i < records.length; i += 500) await sql`INSERT INTO runs ${sql(records.slice(i, i + 500))}`;
    await sql`ANALYZE`;
  }, 300_000);
  afterAll(async () => {
    await sql?.end();
    await pg?.stop();
  });

  /** With sequential scans priced out: a usable index shows up; a query without one still seq-scans. */
  const plan = (text: string, params: unknown[]): Promise<string> =>
    sql.begin(async (tx) => {
      await tx`SET LOCAL enable_seqscan = off`;
      const rows = await tx.unsafe<{ 'QUERY PLAN': string }[]>(`EXPLAIN ${text}`, params as never[]);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });

  it.each([false, true])('finds candidates in runs_finished (cursor: %s)', async (withCursor) => {
    const text = await plan(
      candidatesSql('postgres', withCursor),
      withCursor ? [T0 + 2_000_000, T0 + 1000, runId(1), 200] : [T0 + 2_000_000, 200],
    );
    expect(text).toMatch(/runs_finished/);
    expect(text).not.toMatch(/Seq Scan on runs/);
  });

  it.each(
    PER_RUN.map((text) => {
      let n = 0;
      return text.replace(/\?/g, () => `$${++n}`);
    }),
  )('%s: uses an index', async (text) => {
    expect(await plan(text, [runId(1)])).not.toMatch(/Seq Scan/);
  });
});
