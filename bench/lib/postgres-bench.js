// The PostgreSQL store beside SQLite: per-step overhead and throughput with one runner in this
// process, throughput of `wf start` processes (1 on SQLite, 1 and 3 on PostgreSQL), and the run
// list's queries at 100,000 runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openPostgresStore } from '../../dist/runner-core/index.js';
import { startApp } from './app.js';
import { measurePgCommit, startBenchPostgres } from './postgres.js';
import { startRunner } from './runner-harness.js';
import { measureProcessThroughput, startRunnerProcesses } from './runner-processes.js';
import { measurePgRunList } from './run-list.js';
import { measureSequential } from './sequential.js';
import { startInProcess } from './start-run.js';
import { measureThroughput } from './throughput.js';
import { noop } from './workflows.js';

const FINISHED = `SELECT count(*) FILTER (WHERE status = 'completed') AS completed, count(*) FILTER (WHERE status IN ('failed', 'cancelled')) AS failed FROM runs`;

async function measureInProcess({ url, token, log, results }) {
  // Both without an events listener, so the figures are the stores' and not the listener's reads.
  const sqlite = await startRunner({ token, detect: 'store', label: 'pg-vs-sqlite' });
  const pg = await startRunner({
    token,
    detect: 'store',
    label: 'pg',
    openStore: async () => ({ store: await openPostgresStore(url, { schema: 'bench_in_process' }), remove: () => {} }),
  });
  const app = await startApp({
    routes: { '/noop/10': { workflow: noop(10) }, '/noop/100': { workflow: noop(100) } },
    token,
  });
  try {
    for (const [steps, runs] of [
      [10, 30],
      [100, 10],
    ]) {
      log(`PostgreSQL vs SQLite: sequential, ${steps} steps`);
      const url = app.urlOf(`/noop/${steps}`);
      const variants = [
        { label: 'SQLite, 1 runner in this process', harness: sqlite, start: () => startInProcess(sqlite.runner, url) },
        { label: 'PostgreSQL, 1 runner in this process', harness: pg, start: () => startInProcess(pg.runner, url) },
      ];
      results.sequential.push(...(await measureSequential({ steps, runs, warmup: 3, maxMs: 30_000, app, variants })));
    }
    for (const [label, harness] of [
      ['SQLite, 1 runner in this process', sqlite],
      ['PostgreSQL, 1 runner in this process', pg],
    ]) {
      log(`PostgreSQL vs SQLite: throughput, ${label}`);
      const url = app.urlOf('/noop/10');
      results.throughput.push({
        label,
        ...(await measureThroughput({
          runs: 100,
          steps: 10,
          batches: 3,
          maxMs: 30_000,
          harness,
          start: () => startInProcess(harness.runner, url),
        })),
      });
    }
  } finally {
    await app.close();
    await sqlite.close();
    await pg.close();
  }
}

async function measureProcesses({ url, token, log, results }) {
  const dir = mkdtempSync(join(tmpdir(), 'wfkit-bench-processes-'));
  const app = await startApp({ routes: { '/noop/10': { workflow: noop(10) } }, token, backlog: 1024 });
  const sqlitePath = join(dir, 'runner.db');
  const variants = [
    { label: 'SQLite, 1 wf start process', database: sqlitePath, count: 1, reader: () => sqliteReader(sqlitePath) },
    {
      label: 'PostgreSQL, 1 wf start process',
      database: `${url}?schema=bench_one`,
      count: 1,
      reader: () => pgReader(url, 'bench_one'),
    },
    {
      label: 'PostgreSQL, 2 wf start processes',
      database: `${url}?schema=bench_two`,
      count: 2,
      reader: () => pgReader(url, 'bench_two'),
    },
    {
      label: 'PostgreSQL, 3 wf start processes',
      database: `${url}?schema=bench_three`,
      count: 3,
      reader: () => pgReader(url, 'bench_three'),
    },
  ];
  try {
    for (const variant of variants) {
      log(`throughput, ${variant.label}`);
      const runners = await startRunnerProcesses({ count: variant.count, database: variant.database, token, cwd: dir });
      const reader = await variant.reader();
      try {
        const figures = await measureProcessThroughput({
          urls: runners.urls,
          token,
          appUrl: app.urlOf('/noop/10'),
          countFinished: reader.count,
          runs: 200,
          maxMs: 40_000,
        });
        results.processes.push({ label: variant.label, ...figures });
      } catch (error) {
        results.processes.push({ label: variant.label, error: String(error?.message ?? error) });
      } finally {
        await runners.close();
        await reader.close();
      }
    }
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function sqliteReader(path) {
  const db = new Database(path, { readonly: true });
  const statement = db.prepare(FINISHED); // SQLite has aggregate FILTER too (3.30+)
  return { count: async () => statement.get(), close: async () => db.close() };
}

async function pgReader(url, schema) {
  const store = await openPostgresStore(url, { schema });
  return { count: async () => (await store.query(FINISHED))[0], close: () => store.close() };
}

/** results.postgres: { skipped } when PostgreSQL is not installed; the figures otherwise. */
export async function measurePostgres({ token, log }) {
  const pg = await startBenchPostgres();
  if (pg.skipped) {
    log(pg.skipped);
    return { skipped: pg.skipped };
  }
  const results = { server: null, commit: null, sequential: [], throughput: [], processes: [] };
  const { cluster } = pg;
  try {
    results.server = (await cluster.psql('SHOW server_version')).trim();
    log('PostgreSQL: commit baseline');
    results.commit = await measurePgCommit(cluster.url);
    await measureInProcess({ url: cluster.url, token, log, results });
    await measureProcesses({ url: cluster.url, token, log, results });
    log('PostgreSQL: list queries at 100,000 runs');
    try {
      results.runList = await measurePgRunList(() => openPostgresStore(cluster.url, { schema: 'bench_run_list' }), {
        runs: 100_000,
      });
    } catch (error) {
      results.runList = { error: String(error?.stack ?? error) };
    }
  } finally {
    await cluster.stop();
  }
  return results;
}
