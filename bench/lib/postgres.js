// PostgreSQL for the bench: the tests' throw-away cluster (test/helpers/postgres.ts, loaded through
// Node's type stripping), or the reason the PostgreSQL rows are skipped. The bench never installs
// anything: without Debian's postgresql package it says so and goes on.
import postgres from 'postgres';
import { summarize } from './stats.js';
import { deadline } from './timebox.js';

export async function startBenchPostgres() {
  const helper = await import('../../test/helpers/postgres.ts');
  if (!helper.findPostgresBin()) {
    return {
      skipped: 'PostgreSQL is not installed (Debian: apt-get install postgresql): the PostgreSQL rows are skipped.',
    };
  }
  try {
    return { cluster: await helper.startPostgres({ install: false, database: 'bench' }) };
  } catch (error) {
    return { skipped: `PostgreSQL did not start, so the PostgreSQL rows are skipped: ${error?.message ?? error}` };
  }
}

/** Baseline: one durable PostgreSQL commit (synchronous_commit=on, the default), one small INSERT per transaction, over loopback TCP. */
export async function measurePgCommit(url, { n = 500, warmup = 20, maxMs = 20_000 } = {}) {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const samples = [];
  try {
    await sql`CREATE TABLE IF NOT EXISTS bench_commit (id BIGSERIAL PRIMARY KEY, run_id TEXT NOT NULL, output TEXT)`;
    const commitOne = (i) =>
      sql`INSERT INTO bench_commit (run_id, output) VALUES (${`wfr_${i}`}, ${'"twenty-characters-.."'})`;
    const time = deadline(maxMs);
    for (let i = 0; i < warmup && !time.passed(); i++) await commitOne(i);
    for (let i = 0; i < n && !time.passed(); i++) {
      const t0 = performance.now();
      await commitOne(i);
      samples.push(performance.now() - t0);
    }
  } finally {
    await sql.end({ timeout: 5 });
  }
  return summarize(samples);
}
