/**
 * Retention's half of the store (runner-core/retention/ walks it): finished runs that owe nothing,
 * oldest first, and the deletion of a batch of them with every row under them. A part of the
 * store, like its schedules: nothing on a run's path reads it.
 */

/**
 * A run pruning may delete: finished, and owing nothing the runner still delivers (no pending
 * failureFunction call, no pending alert: the complement of CLAIMABLE in claimable.ts, with NULL
 * spelled out). The status list is the partial index `runs_finished`'s, so both planners use it.
 */
export const PRUNABLE = `status IN ('completed', 'failed', 'cancelled') AND COALESCE(failure_call, '') != 'pending' AND COALESCE(alert, '') != 'pending'`;

/** Which finished runs a prune pass looks at: finished before the cutoff, after the cursor, at most `limit`. */
export interface PruneCandidatesQuery {
  finishedBefore: number;
  after: PruneCursor | null;
  limit: number;
}

/**
 * The candidates query, in one text for both dialects (`?` placeholders become `$n` on
 * PostgreSQL): parameters `finishedBefore`, then with a cursor its `finishedAt` and `id`, then the
 * limit. Row values compare in the index's order, so a later page starts where the last ended.
 */
export function candidatesSql(dialect: 'sqlite' | 'postgres', withCursor: boolean): string {
  // SQLite without ANALYZE statistics (as every store is) prefers runs_status and sorts every
  // finished run; INDEXED BY holds it to the index whose order is the walk's.
  const text = `SELECT id, finished_at AS "finishedAt" FROM runs ${dialect === 'sqlite' ? 'INDEXED BY runs_finished ' : ''}WHERE ${PRUNABLE} AND finished_at < ?
    ${withCursor ? 'AND (finished_at, id) > (?, ?)' : ''} ORDER BY finished_at, id LIMIT ?`;
  let n = 0;
  return dialect === 'sqlite' ? text : text.replace(/\?/g, () => `$${++n}`);
}

/** Where a walk over finished runs stands: the last run it looked at, by `(finishedAt, id)`. */
export interface PruneCursor {
  finishedAt: number;
  id: string;
}

/** Rows of the core tables a prune deleted (or, on a dry run, would delete). */
export interface RunRowCounts {
  runs: number;
  steps: number;
  attempts: number;
  stepLogs: number;
}

export interface RetentionStore {
  /**
   * Up to `limit` prunable runs that finished before `finishedBefore`, after `after` in
   * `(finishedAt, id)` order: from the index `runs_finished`, so no scan however many runs there are.
   */
  candidates(query: PruneCandidatesQuery): Promise<PruneCursor[]>;
  /**
   * Deletes these runs with their steps, attempts and step logs, in one transaction, checking each
   * again in it (a run resumed since it was listed is not prunable any more and stays); with
   * `dryRun` only counts what it would delete. The QStash parts go first (retention/prune.ts): a
   * QStash message still pending would otherwise go with its run, through the foreign key's cascade.
   */
  deleteRuns(runIds: readonly string[], options: { finishedBefore: number; dryRun: boolean }): Promise<RunRowCounts>;
  /**
   * Runs `work` as the only pruner of the database: on PostgreSQL under an advisory lock (several
   * runners prune each batch once); `{ ran: false }` at once when another runner holds it.
   */
  exclusively<T>(work: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
  /** The database's size on disk in bytes (SQLite: its pages plus the WAL; PostgreSQL: its tables with their indexes and TOAST). */
  sizeBytes(): Promise<number>;
}

/** No rows. */
export const NO_ROWS: RunRowCounts = { runs: 0, steps: 0, attempts: 0, stepLogs: 0 };
