import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CLAIMABLE } from '../../runner-core/store/claimable.js';
import { migrate } from '../../runner-core/store/migrations/sqlite.js';
import { CLAIMABLE_NOW } from '../../runner-core/store/sqlite/store.js';

/**
 * The claim reads the partial index `runs_claimable`, whose predicate each migration that widens
 * CLAIMABLE (the failureFunction call, the failure alert) spells out again: if the two ever differ,
 * SQLite stops using the index and every claim scans the runs table.
 */
describe('the claim query plan (SQLite)', () => {
  it('uses runs_claimable after every migration', () => {
    const db = new Database(':memory:');
    migrate(db);
    const plan = db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT * FROM runs WHERE ${CLAIMABLE} AND next_at IS NOT NULL AND next_at <= 5 AND (lease_until IS NULL OR lease_until < 5) ORDER BY next_at LIMIT 10`,
      )
      .all() as { detail: string }[];
    expect(plan.map((row) => row.detail).join('\n')).toMatch(/USING INDEX runs_claimable/);
    db.close();
  });

  it('looks for any due run (the read before a claim takes the write lock) through runs_claimable', () => {
    const db = new Database(':memory:');
    migrate(db);
    const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT 1 FROM runs WHERE ${CLAIMABLE_NOW} LIMIT 1`).all({ now: 5 }) as {
      detail: string;
    }[];
    expect(plan.map((row) => row.detail).join('\n')).toMatch(/USING INDEX runs_claimable/);
    db.close();
  });
});
