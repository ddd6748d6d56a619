import type { Sql, TransactionSql } from 'postgres';
import type { QstashWaitStore, RegisterResult, Wait, Notification, RunNotification } from './waits.js';
import { ENDED_STATUSES_SQL, toWait, waitRow, type WaitRow } from './rows.js';

type Db = Sql<{ bigint: number }>;

/**
 * The PostgreSQL half of `QstashWaitStore`. `register` and `notifyRun` read, then write: each
 * holds a transaction-scoped advisory lock on its (run, event) pair, so of a wait and a
 * run-targeted notify racing on two runners, the second always sees the first's row.
 * Timeouts are leased with `FOR UPDATE SKIP LOCKED`, so each is delivered by one runner.
 */
export class PostgresQstashWaits implements QstashWaitStore {
  readonly #sql: Db;
  constructor(sql: Db) {
    this.#sql = sql;
  }

  async #lockPair(tx: TransactionSql<{ bigint: number }>, runId: string, eventId: string): Promise<void> {
    // Two int4 keys (a namespace and the pair's hash) keep clear of the store's own advisory locks.
    await tx`SELECT pg_advisory_xact_lock(7514, hashtext(${runId} || '/' || ${eventId}))`;
  }

  async register(wait: Wait, now: number): Promise<RegisterResult> {
    return (await this.#sql.begin(async (tx) => {
      await this.#lockPair(tx, wait.runId, wait.eventId);
      const [kept] = await tx<{ data: string }[]>`DELETE FROM qstash_kept_events WHERE seq = (
          SELECT seq FROM qstash_kept_events WHERE run_id = ${wait.runId} AND event_id = ${wait.eventId} AND keep_until > ${now} ORDER BY seq LIMIT 1)
        RETURNING data`;
      if (kept) return { kind: 'kept-event', data: kept.data };
      const r = waitRow(wait);
      await tx`INSERT INTO qstash_waits (run_id, event_id, step_id, waiter, created_at, deadline)
        VALUES (${r.run_id}, ${r.event_id}, ${r.step_id}, ${r.waiter}, ${r.created_at}, ${r.deadline})
        ON CONFLICT (run_id, event_id, step_id) DO UPDATE SET waiter = excluded.waiter, deadline = excluded.deadline, fire_until = NULL`;
      return { kind: 'waiting' };
    })) as RegisterResult;
  }

  /** A run that ended waits no more: its waits on the event are dropped, never notified. */
  #ended(): ReturnType<Db['unsafe']> {
    return this.#sql.unsafe(
      `EXISTS (SELECT 1 FROM runs r WHERE r.id = qstash_waits.run_id AND r.status IN (${ENDED_STATUSES_SQL}))`,
    );
  }

  async takeWaits(eventId: string, now: number): Promise<Wait[]> {
    await this.#sql`DELETE FROM qstash_waits WHERE event_id = ${eventId} AND ${this.#ended()}`;
    const rows = await this.#sql<
      WaitRow[]
    >`DELETE FROM qstash_waits WHERE event_id = ${eventId} AND (fire_until IS NULL OR fire_until <= ${now}) RETURNING *`;
    return rows.map(toWait);
  }

  async notifyRun(notification: RunNotification): Promise<Notification> {
    const { runId, eventId, now, maxKept = Infinity } = notification;
    return (await this.#sql.begin(async (tx) => {
      await this.#lockPair(tx, runId, eventId);
      await tx`DELETE FROM qstash_waits WHERE event_id = ${eventId} AND run_id = ${runId} AND ${this.#ended()}`;
      const rows = await tx<WaitRow[]>`DELETE FROM qstash_waits WHERE event_id = ${eventId} AND run_id = ${runId}
        AND (fire_until IS NULL OR fire_until <= ${now}) RETURNING *`;
      if (rows.length > 0) return { waits: rows.map(toWait), kept: false };
      if (Number.isFinite(maxKept)) {
        const [count] = await tx<{ n: number }[]>`SELECT COUNT(*)::int AS n FROM qstash_kept_events
          WHERE run_id = ${runId} AND event_id = ${eventId} AND keep_until > ${now}`;
        if ((count?.n ?? 0) >= maxKept) return { waits: [], kept: false };
      }
      await tx`INSERT INTO qstash_kept_events (run_id, event_id, data, created_at, keep_until) VALUES (${runId}, ${eventId}, ${notification.data}, ${now}, ${notification.keepUntil})`;
      return { waits: [], kept: true };
    })) as { waits: Wait[]; kept: boolean };
  }

  async listWaits(eventId: string, limit: number): Promise<Wait[]> {
    const rows = await this.#sql<
      WaitRow[]
    >`SELECT * FROM qstash_waits WHERE event_id = ${eventId} AND NOT ${this.#ended()} ORDER BY created_at, run_id LIMIT ${Math.max(0, Math.trunc(limit))}`;
    return rows.map(toWait);
  }

  async claimTimedOut(now: number, leaseMs: number, limit: number): Promise<Wait[]> {
    await this.#sql`DELETE FROM qstash_kept_events WHERE keep_until <= ${now}`;
    const rows = await this.#sql<
      WaitRow[]
    >`UPDATE qstash_waits SET fire_until = ${now + leaseMs} WHERE (run_id, event_id, step_id) IN (
        SELECT run_id, event_id, step_id FROM qstash_waits WHERE deadline <= ${now} AND (fire_until IS NULL OR fire_until <= ${now})
        ORDER BY deadline LIMIT ${Math.max(0, Math.trunc(limit))} FOR UPDATE SKIP LOCKED)
      RETURNING *`;
    return rows.map(toWait);
  }

  async deleteWait(runId: string, eventId: string, stepId: number): Promise<void> {
    await this.#sql`DELETE FROM qstash_waits WHERE run_id = ${runId} AND event_id = ${eventId} AND step_id = ${stepId}`;
  }

  async pruneRuns(runIds: readonly string[], { dryRun }: { dryRun: boolean }): Promise<number> {
    if (runIds.length === 0) return 0;
    const sql = this.#sql;
    const ids = [...runIds];
    const [row] = dryRun
      ? await sql<{ n: number }[]>`SELECT ((SELECT COUNT(*) FROM qstash_waits WHERE run_id = ANY(${ids}::text[]))
          + (SELECT COUNT(*) FROM qstash_kept_events WHERE run_id = ANY(${ids}::text[])))::int AS n`
      : await sql<{ n: number }[]>`WITH w AS (DELETE FROM qstash_waits WHERE run_id = ANY(${ids}::text[]) RETURNING 1),
          k AS (DELETE FROM qstash_kept_events WHERE run_id = ANY(${ids}::text[]) RETURNING 1)
          SELECT ((SELECT COUNT(*) FROM w) + (SELECT COUNT(*) FROM k))::int AS n`;
    return row?.n ?? 0;
  }
}
