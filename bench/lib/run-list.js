// Finding runs at 100,000 runs: the run list's queries (`store.listRuns`, what `GET /v1/runs`
// calls) on a SQLite store holding that many, each against a primary-key lookup (`store.getRun`)
// measured in the same run, so the figure reads as "N lookups' worth" on any machine.
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../dist/runner-core/index.js';
import { summarize } from './stats.js';
import { tempDbPath } from './temp-db.js';
import { deadline } from './timebox.js';

const T_END = Date.UTC(2026, 0, 31, 12);
const SPACING_MS = 1_000; // one run a second: 100,000 runs span about 28 hours
const URLS = 20;
const HOUR = 3_600_000;

const runId = (i) => `wfr_${String(i).padStart(26, '0')}`;
// By hundreds, so a URL is not tied to a status (which goes by i % 100): no planner is helped by a pattern.
const urlOf = (i) => `https://app${Math.floor(i / 100) % URLS}.example/api/workflows/w${i % 3}`;
/** 2 % failed (at "charge"), 3 % in flight, 1 % cancelled, the rest completed: a store that mostly went well. */
function statusOf(i) {
  const k = i % 100;
  return k < 2 ? 'failed' : k < 5 ? ['running', 'sleeping', 'waiting'][k - 2] : k === 5 ? 'cancelled' : 'completed';
}

/**
 * Seeds `runs` runs (3 steps each) straight into the store's file in one transaction: the store
 * has no bulk insert, and 100,000 `createRun` calls would time the seeding, not the list.
 */
function seed(path, runs) {
  const db = new Database(path);
  try {
    const run =
      db.prepare(`INSERT INTO runs (id, url, status, body, headers, created_at, updated_at, finished_at, retries, retry_delay_ms, steps_done)
      VALUES (?, ?, ?, '{}', '{}', ?, ?, ?, 3, 1000, ?)`);
    const step = db.prepare(`INSERT INTO steps (run_id, idx, name, kind, status, started_at, finished_at, duration_ms)
      VALUES (?, ?, ?, 'run', ?, ?, ?, 1)`);
    db.transaction(() => {
      for (let i = 0; i < runs; i++) {
        const at = T_END - (runs - i) * SPACING_MS;
        const status = statusOf(i);
        const finished = ['completed', 'failed', 'cancelled'].includes(status) ? at + 100 : null;
        run.run(runId(i), urlOf(i), status, at, at, finished, status === 'failed' ? 1 : 3);
        ['reserve', 'charge', 'email'].forEach((name, idx) => {
          const stepStatus =
            status === 'failed' && name === 'charge'
              ? 'failed'
              : status === 'failed' && name === 'email'
                ? null
                : 'succeeded';
          if (stepStatus) step.run(runId(i), idx, name, stepStatus, at + idx, at + idx + 1);
        });
      }
    })();
  } finally {
    db.close();
  }
}

async function time(fn, { n, warmup, maxMs }) {
  const samples = [];
  const clock = deadline(maxMs);
  for (let i = 0; i < warmup && !clock.passed(); i++) await fn(i);
  for (let i = 0; i < n && !clock.passed(); i++) {
    const t0 = performance.now();
    await fn(i);
    samples.push(performance.now() - t0);
  }
  return summarize(samples);
}

/** The queries the dashboards and `wf runs` make, each a first page of 50. */
function queries(runs) {
  const last = T_END - SPACING_MS;
  return [
    { label: 'first page, no filter', query: {} },
    { label: 'status failed', query: { status: 'failed' } },
    { label: 'statuses running, sleeping, waiting', query: { status: ['running', 'sleeping', 'waiting'] } },
    { label: 'one workflow URL, exactly', query: { url: urlOf(7) } },
    { label: 'workflow URL prefix (an origin)', query: { urlPrefix: 'https://app7.example/' } },
    { label: 'created in the last hour', query: { createdAfter: last - HOUR } },
    {
      label: 'created in one hour a day ago',
      query: { createdAfter: last - 25 * HOUR, createdBefore: last - 24 * HOUR },
    },
    { label: 'failed step "charge"', query: { failedStep: 'charge' } },
    { label: 'id prefix (one run)', query: { idPrefix: runId(Math.floor(runs / 2)).slice(0, -1) } },
    {
      label: 'failed + URL prefix + last 24 h',
      query: { status: 'failed', urlPrefix: 'https://app0.example/', createdAfter: last - 24 * HOUR },
    },
    { label: 'status failed, page 20 (cursor)', query: { status: 'failed' }, pages: 20 },
  ];
}

/** Times every query of `queries` and the primary-key baseline on a seeded store. */
async function timeQueries(store, runs, { n, warmup, maxMs }) {
  const lookup = await time((i) => store.getRun(runId((i * 7919) % runs)), { n: n * 4, warmup, maxMs });
  const rows = [];
  for (const { label, query, pages = 1 } of queries(runs)) {
    // A later page starts from the cursor the pages before it gave (found once, outside the timing).
    let cursor;
    for (let p = 1; p < pages; p++)
      cursor = (await store.listRuns({ ...query, ...(cursor && { cursor }) })).nextCursor ?? undefined;
    const paged = { ...query, ...(cursor && { cursor }) };
    const found = (await store.listRuns(paged)).runs.length;
    const figures = await time(() => store.listRuns(paged), { n, warmup, maxMs });
    rows.push({ label, found, ...figures, vsLookup: figures.median / lookup.median });
  }
  return { lookup, rows };
}

export async function measureRunList({ runs = 100_000, n = 50, warmup = 5, maxMs = 10_000 } = {}) {
  const file = tempDbPath('run-list');
  try {
    await openSqliteStore(file.path).close(); // the schema, migrations included
    const seedStart = performance.now();
    seed(file.path, runs);
    const seedMs = performance.now() - seedStart;
    const store = openSqliteStore(file.path);
    try {
      return { runs, seedMs, ...(await timeQueries(store, runs, { n, warmup, maxMs })) };
    } finally {
      await store.close();
    }
  } finally {
    file.remove();
  }
}

/**
 * The same on a PostgreSQL store (its own schema), seeded by one INSERT … SELECT over
 * generate_series with the same runs as `seed`, then ANALYZE (as autovacuum would soon).
 */
export async function measurePgRunList(openStore, { runs = 100_000, n = 50, warmup = 5, maxMs = 10_000 } = {}) {
  const store = await openStore();
  try {
    const seedStart = performance.now();
    const at = `(${T_END} - (${runs} - i) * ${SPACING_MS})::bigint`;
    const status = `CASE WHEN i % 100 < 2 THEN 'failed' WHEN i % 100 = 2 THEN 'running' WHEN i % 100 = 3 THEN 'sleeping'
      WHEN i % 100 = 4 THEN 'waiting' WHEN i % 100 = 5 THEN 'cancelled' ELSE 'completed' END`;
    await store.query(`INSERT INTO runs (id, url, status, body, headers, created_at, updated_at, finished_at, retries, retry_delay_ms, steps_done)
      SELECT 'wfr_' || lpad(i::text, 26, '0'), 'https://app' || ((i / 100) % ${URLS}) || '.example/api/workflows/w' || (i % 3), ${status}, '{}', '{}',
        ${at}, ${at}, CASE WHEN i % 100 BETWEEN 2 AND 4 THEN NULL ELSE ${at} + 100 END, 3, 1000, CASE WHEN i % 100 < 2 THEN 1 ELSE 3 END
      FROM generate_series(0, ${runs - 1}) AS i`);
    await store.query(`INSERT INTO steps (run_id, idx, name, kind, status, started_at, finished_at, duration_ms)
      SELECT 'wfr_' || lpad(i::text, 26, '0'), s.idx, s.name, 'run', CASE WHEN i % 100 < 2 AND s.name = 'charge' THEN 'failed' ELSE 'succeeded' END,
        ${at} + s.idx, ${at} + s.idx + 1, 1
      FROM generate_series(0, ${runs - 1}) AS i CROSS JOIN (VALUES (0, 'reserve'), (1, 'charge'), (2, 'email')) AS s (idx, name)
      WHERE NOT (i % 100 < 2 AND s.name = 'email')`);
    await store.query('ANALYZE runs');
    await store.query('ANALYZE steps');
    const seedMs = performance.now() - seedStart;
    return { runs, seedMs, ...(await timeQueries(store, runs, { n, warmup, maxMs })) };
  } finally {
    await store.close();
  }
}
