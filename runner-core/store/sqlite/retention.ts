import { statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { candidatesSql, PRUNABLE } from '../retention.js';
import type * as R from '../retention.js';

/**
 * The SQLite half of `RetentionStore`, on the store's connection. A batch is one short IMMEDIATE
 * transaction: drives wait for it like for any commit, so the pruner keeps batches small and
 * yields between them (runner-core/retention/prune.ts).
 */
export class SqliteRetention implements R.RetentionStore {
  readonly #db: Database.Database;
  readonly #first: Database.Statement;
  readonly #after: Database.Statement;
  readonly #deleteBatch: (runIds: readonly string[], finishedBefore: number, dryRun: boolean) => R.RunRowCounts;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#first = db.prepare(candidatesSql('sqlite', false));
    this.#after = db.prepare(candidatesSql('sqlite', true));
    const prunable = db.prepare(`SELECT 1 FROM runs WHERE id = ? AND ${PRUNABLE} AND finished_at < ?`).pluck();
    const count = (table: string) => db.prepare(`SELECT COUNT(*) FROM ${table} WHERE run_id = ?`).pluck();
    const remove = (table: string) => db.prepare(`DELETE FROM ${table} WHERE run_id = ?`);
    const counters = { steps: count('steps'), attempts: count('attempts'), stepLogs: count('step_logs') };
    const removers = { steps: remove('steps'), attempts: remove('attempts'), stepLogs: remove('step_logs') };
    const deleteRun = db.prepare('DELETE FROM runs WHERE id = ?');
    const batch = db.transaction(
      (runIds: readonly string[], finishedBefore: number, dryRun: boolean): R.RunRowCounts => {
        const counts: R.RunRowCounts = { runs: 0, steps: 0, attempts: 0, stepLogs: 0 };
        for (const id of runIds) {
          if (prunable.get(id, finishedBefore) === undefined) continue;
          counts.runs++;
          for (const key of ['steps', 'attempts', 'stepLogs'] as const) {
            counts[key] += dryRun ? (counters[key].get(id) as number) : removers[key].run(id).changes;
          }
          // The children go first, counted; the foreign keys' cascade then finds none left.
          if (!dryRun) deleteRun.run(id);
        }
        return counts;
      },
    );
    this.#deleteBatch = (runIds, finishedBefore, dryRun) => batch.immediate(runIds, finishedBefore, dryRun);
  }

  async candidates({ finishedBefore, after, limit }: R.PruneCandidatesQuery): Promise<R.PruneCursor[]> {
    const take = Math.max(0, Math.trunc(limit));
    const rows =
      after === null
        ? this.#first.all(finishedBefore, take)
        : this.#after.all(finishedBefore, after.finishedAt, after.id, take);
    return rows as R.PruneCursor[];
  }

  async deleteRuns(
    runIds: readonly string[],
    { finishedBefore, dryRun }: { finishedBefore: number; dryRun: boolean },
  ): Promise<R.RunRowCounts> {
    return this.#deleteBatch(runIds, finishedBefore, dryRun);
  }

  /** One connection per process, and each batch one transaction that checks every run again: nothing to lock. */
  async exclusively<T>(work: () => Promise<T>): Promise<{ ran: true; value: T }> {
    return { ran: true, value: await work() };
  }

  async sizeBytes(): Promise<number> {
    const pages =
      (this.#db.pragma('page_count', { simple: true }) as number) *
      (this.#db.pragma('page_size', { simple: true }) as number);
    const file = this.#db.name;
    if (this.#db.memory || file === '') return pages;
    try {
      return pages + statSync(`${file}-wal`).size;
    } catch {
      return pages; // no WAL file right now (checkpointed and truncated, or not yet written)
    }
  }
}
