import type { Sql } from 'postgres';
import { ms } from './changes.js';
import { candidatesSql, PRUNABLE } from '../retention.js';
import type * as R from '../retention.js';

/**
 * The PostgreSQL half of `RetentionStore`. A batch is one statement (data-modifying CTEs), so one
 * transaction that never waits on this client; its runs are locked in id order (the order every
 * transaction here locks runs in) and SKIP LOCKED, so a prune never waits for a drive's commit nor
 * deadlocks with one. Several runners take turns through an advisory lock (`exclusively`), so each
 * batch is pruned once.
 */
export class PostgresRetention implements R.RetentionStore {
  readonly #sql: Sql<{ bigint: number }>;
  readonly #schema: string;

  constructor(sql: Sql<{ bigint: number }>, schema: string) {
    this.#sql = sql;
    this.#schema = schema;
  }

  async candidates({ finishedBefore, after, limit }: R.PruneCandidatesQuery): Promise<R.PruneCursor[]> {
    const take = Math.max(0, Math.trunc(limit));
    const params =
      after === null ? [ms(finishedBefore), take] : [ms(finishedBefore), ms(after.finishedAt), after.id, take];
    return this.#sql.unsafe<R.PruneCursor[]>(candidatesSql('postgres', after !== null), params, { prepare: true });
  }

  async deleteRuns(
    runIds: readonly string[],
    { finishedBefore, dryRun }: { finishedBefore: number; dryRun: boolean },
  ): Promise<R.RunRowCounts> {
    if (runIds.length === 0) return { runs: 0, steps: 0, attempts: 0, stepLogs: 0 };
    const sql = this.#sql;
    const ids = [...runIds];
    const prunable = sql`SELECT id FROM runs WHERE id = ANY(${ids}::text[]) AND ${sql.unsafe(PRUNABLE)} AND finished_at < ${ms(finishedBefore)}::bigint`;
    if (dryRun) {
      const [row] = await sql<R.RunRowCounts[]>`WITH victims AS (${prunable})
        SELECT (SELECT COUNT(*) FROM victims)::int AS runs,
          (SELECT COUNT(*) FROM steps WHERE run_id IN (SELECT id FROM victims))::int AS steps,
          (SELECT COUNT(*) FROM attempts WHERE run_id IN (SELECT id FROM victims))::int AS attempts,
          (SELECT COUNT(*) FROM step_logs WHERE run_id IN (SELECT id FROM victims))::int AS "stepLogs"`;
      return row!;
    }
    const [row] = await sql<
      R.RunRowCounts[]
    >`WITH victims AS MATERIALIZED (${prunable} ORDER BY id FOR UPDATE SKIP LOCKED),
        s AS (DELETE FROM steps WHERE run_id IN (SELECT id FROM victims) RETURNING 1),
        a AS (DELETE FROM attempts WHERE run_id IN (SELECT id FROM victims) RETURNING 1),
        l AS (DELETE FROM step_logs WHERE run_id IN (SELECT id FROM victims) RETURNING 1),
        r AS (DELETE FROM runs WHERE id IN (SELECT id FROM victims) RETURNING 1)
      SELECT (SELECT COUNT(*) FROM r)::int AS runs, (SELECT COUNT(*) FROM s)::int AS steps,
        (SELECT COUNT(*) FROM a)::int AS attempts, (SELECT COUNT(*) FROM l)::int AS "stepLogs"`;
    return row!;
  }

  /**
   * A session advisory lock on one reserved connection, keyed by the schema: the other runners'
   * pruners find it taken and skip their turn. If this process dies, its connection closes and
   * the lock goes with it.
   */
  async exclusively<T>(work: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
    const connection = await this.#sql.reserve();
    const key = `wfkit.prune.${this.#schema}`;
    try {
      const [row] = await connection<{ locked: boolean }[]>`SELECT pg_try_advisory_lock(hashtext(${key})) AS locked`;
      if (!row?.locked) return { ran: false };
      try {
        return { ran: true, value: await work() };
      } finally {
        await connection`SELECT pg_advisory_unlock(hashtext(${key}))`;
      }
    } finally {
      connection.release();
    }
  }

  async sizeBytes(): Promise<number> {
    const [row] = await this.#sql<
      { bytes: number }[]
    >`SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ${this.#schema} AND c.relkind = 'r'`;
    return row?.bytes ?? 0;
  }
}
