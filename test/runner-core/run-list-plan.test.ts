import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../runner-core/store/postgres/store.js';
import { runListSql } from '../../runner-core/store/run-list-sql.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { RunQuery } from '../../runner-core/store/types.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';

/**
 * The run list's filters use indexes: EXPLAIN of each query shape (run-list-sql.ts) on a real
 * store file / database, seeded with enough runs that a plan which scans the table would show it.
 * A filter whose plan reads the whole `runs` table (SQLite `SCAN runs` without an index, PostgreSQL
 * `Seq Scan on runs`) fails here; the bench (`npm run bench`) times the same queries at 100,000 runs.
 */

const RUNS = 3000;
const T0 = 1_700_000_000_000;
const COMMON = ['completed', 'running', 'queued'];
const runId = (i: number): string => `wfr_${String(i).padStart(26, '0')}`;

/**
 * What the filters below look for is rare, as in a real store (1 run in 100 failed, at step
 * "charge", of app3; 1 in 100 cancelled): with a common value PostgreSQL rightly prefers to walk
 * the primary key newest first and stop at a page, which says nothing about the filter's index.
 */
function seedRows(insertRun: (row: unknown[]) => void, insertStep: (row: unknown[]) => void): void {
  for (let i = 0; i < RUNS; i++) {
    const status = i % 100 === 0 ? 'failed' : i % 100 === 50 ? 'cancelled' : COMMON[i % COMMON.length]!;
    const url = i % 100 === 0 ? 'http://app3.test/wf' : `http://app${10 + (i % 20)}.test/wf`;
    insertRun([runId(i), url, status, '{}', '{}', T0 + i * 1000, T0 + i * 1000, 3, 1000]);
    insertStep([
      runId(i),
      0,
      i % 100 === 0 ? 'charge' : 'email',
      'run',
      status === 'failed' ? 'failed' : 'succeeded',
      T0 + i * 1000,
    ]);
  }
}

/** Each filter alone and a few together, with the index the plan must name. */
const SHAPES: { name: string; query: RunQuery; sqlite: RegExp; postgres: RegExp }[] = [
  {
    name: 'one status',
    query: { status: 'failed' },
    sqlite: /SEARCH runs USING (COVERING )?INDEX runs_status/,
    postgres: /runs_status/,
  },
  {
    name: 'several statuses',
    query: { status: ['failed', 'cancelled'] },
    sqlite: /SEARCH runs USING (COVERING )?INDEX runs_status/,
    postgres: /runs_status/,
  },
  {
    name: 'exact URL',
    query: { url: 'http://app3.test/wf' },
    sqlite: /SEARCH runs USING (COVERING )?INDEX runs_url \(url=\?\)/,
    postgres: /runs_url/,
  },
  {
    name: 'URL prefix',
    query: { urlPrefix: 'http://app3.' },
    sqlite: /SEARCH runs USING (COVERING )?INDEX runs_url \(url>\? AND url<\?\)/,
    postgres: /runs_url/,
  },
  {
    name: 'created from',
    query: { createdAfter: T0 + 2900_000 },
    sqlite: /SEARCH runs USING (COVERING )?INDEX runs_created/,
    postgres: /runs_created|runs_pkey/,
  },
  {
    name: 'created range',
    query: { createdAfter: T0 + 1000_000, createdBefore: T0 + 1100_000 },
    sqlite: /SEARCH runs USING (COVERING )?INDEX runs_created/,
    postgres: /runs_created/,
  },
  {
    name: 'failed step',
    query: { failedStep: 'charge' },
    sqlite: /SEARCH steps USING COVERING INDEX steps_failed \(name=\?\)/,
    postgres: /steps_failed/,
  },
  {
    name: 'id prefix',
    query: { idPrefix: runId(1234) },
    sqlite: /SEARCH runs USING (COVERING )?INDEX sqlite_autoindex_runs_1 \(id>\? AND id<\?\)/,
    postgres: /runs_id_prefix|runs_pkey/,
  },
  {
    name: 'status and URL',
    query: { status: 'failed', url: 'http://app3.test/wf' },
    sqlite: /SEARCH runs USING (COVERING )?INDEX runs_(url|status)/,
    postgres: /runs_(url|status)/,
  },
  {
    name: 'a later page of several statuses',
    query: { status: ['failed', 'cancelled'], cursor: runId(1500) },
    sqlite: /SEARCH runs USING (COVERING )?INDEX runs_status \(status=\? AND id<\?\)/,
    postgres: /runs_status/,
  },
];

describe('the run list on SQLite', () => {
  let dir: string;
  let db: Database.Database;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'wf-plan-'));
    const path = join(dir, 'runs.db');
    await openSqliteStore(path).close(); // creates the schema, migrations included
    db = new Database(path);
    const run = db.prepare(
      'INSERT INTO runs (id, url, status, body, headers, created_at, updated_at, retries, retry_delay_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const step = db.prepare(
      'INSERT INTO steps (run_id, idx, name, kind, status, started_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    db.transaction(() =>
      seedRows(
        (row) => run.run(...row),
        (row) => step.run(...row),
      ),
    )();
  });
  afterAll(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const plan = (query: RunQuery): string => {
    const { text, params } = runListSql(query, 51, 'sqlite');
    return (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as { detail: string }[])
      .map((row) => row.detail)
      .join('\n');
  };

  it.each(SHAPES)('$name: searches an index, never scans the table', ({ query, sqlite }) => {
    const text = plan(query);
    expect(text).toMatch(sqlite);
    expect(text).not.toMatch(/SCAN (runs|steps)(?! USING)/);
  });

  it('an unfiltered page walks the primary key newest first (no sort)', () => {
    expect(plan({})).toBe('SCAN runs USING INDEX sqlite_autoindex_runs_1');
  });

  it('the queries answer what the filters say on the seeded rows', () => {
    const rows = (query: RunQuery) => {
      const { text, params } = runListSql(query, 10_000, 'sqlite');
      return db.prepare(text).all(...params) as { id: string; status: string; url: string; created_at: number }[];
    };
    const failedCharge = rows({ failedStep: 'charge' });
    expect(failedCharge.length).toBeGreaterThan(0);
    expect(failedCharge.map((row) => Number(row.id.slice(4)))).toEqual(
      Array.from({ length: RUNS / 100 }, (_, k) => RUNS - 100 - k * 100),
    );
    expect(rows({ urlPrefix: 'http://app3.' }).every((row) => row.url === 'http://app3.test/wf')).toBe(true);
    expect(rows({ createdAfter: T0 + 2900_000 }).map((row) => row.created_at)).toEqual(
      Array.from({ length: 100 }, (_, k) => T0 + (2999 - k) * 1000),
    );
  });
});

describe('the run list on PostgreSQL', () => {
  let pg: PostgresCluster | undefined;
  let sql: postgres.Sql;
  beforeAll(async () => {
    pg = await startPostgres({ database: 'run_list_plan' });
    await (await openPostgresStore(pg.url, { schema: 'plan' })).close(); // creates the schema
    sql = postgres(pg.url, { onnotice: () => {}, connection: { search_path: 'plan' } });
    const runs: unknown[][] = [];
    const steps: unknown[][] = [];
    seedRows(
      (row) => runs.push(row),
      (row) => steps.push(row),
    );
    const runColumns = [
      'id',
      'url',
      'status',
      'body',
      'headers',
      'created_at',
      'updated_at',
      'retries',
      'retry_delay_ms',
    ];
    const stepColumns = ['run_id', 'idx', 'name', 'kind', 'status', 'started_at'];
    const records = (rows: unknown[][], columns: string[]) =>
      rows.map(
        (row) =>
          Object.fromEntries(columns.map((c, k) => [c, row[k]])) as Record<string, postgres.ParameterOrJSON<never>>,
      );
    for (let i = 0; i < runs.length; i += 500) {
      await sql`INSERT INTO runs ${sql(records(runs.slice(i, i + 500), runColumns))}`;
      await sql`INSERT INTO steps ${sql(records(steps.slice(i, i + 500), stepColumns))}`;
    }
    await sql`ANALYZE`;
  }, 300_000);
  afterAll(async () => {
    await sql?.end();
    await pg?.stop();
  });

  /** The plan with sequential scans priced out: an index the query can use shows up; a query that cannot use one still seq-scans. */
  const plan = async (query: RunQuery): Promise<string> => {
    const { text, params } = runListSql(query, 51, 'postgres');
    return sql.begin(async (tx) => {
      await tx`SET LOCAL enable_seqscan = off`;
      const rows = await tx.unsafe<{ 'QUERY PLAN': string }[]>(`EXPLAIN ${text}`, params as never[]);
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
  };

  it.each(SHAPES)('$name: uses an index, never a sequential scan', async ({ query, postgres: expected }) => {
    const text = await plan(query);
    expect(text).toMatch(expected);
    expect(text).not.toMatch(/Seq Scan on (runs|steps)/);
  });
});
