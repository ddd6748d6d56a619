// Baseline (b): one durable SQLite commit (WAL, synchronous=FULL), one small INSERT per transaction.
import Database from 'better-sqlite3';
import { summarize } from './stats.js';
import { tempDbPath } from './temp-db.js';
import { deadline } from './timebox.js';

export async function measureSqliteCommit({ n = 500, warmup = 20, maxMs = 20_000 } = {}) {
  const file = tempDbPath('sqlite-baseline');
  const db = new Database(file.path);
  const samples = [];
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, output TEXT)');
    const insert = db.prepare('INSERT INTO t (run_id, output) VALUES (?, ?)');
    const commitOne = db.transaction((i) => insert.run(`wfr_${i}`, '"twenty-characters-.."'));
    const time = deadline(maxMs);
    for (let i = 0; i < warmup && !time.passed(); i++) commitOne.immediate(i);
    for (let i = 0; i < n && !time.passed(); i++) {
      const t0 = performance.now();
      commitOne.immediate(i);
      samples.push(performance.now() - t0);
    }
  } finally {
    db.close();
    file.remove();
  }
  return { ...summarize(samples), samples };
}
