import type Database from 'better-sqlite3';
import type { QstashWaitStore, RegisterResult, Wait, Notification, RunNotification } from './waits.js';
import { ENDED_STATUSES_SQL as ENDED, toWait, waitRow, type WaitRow } from './rows.js';

/** The SQLite half of `QstashWaitStore`, on the store's connection; each method one IMMEDIATE transaction. */
export class SqliteQstashWaits implements QstashWaitStore {
  readonly #register: (wait: Wait, now: number) => RegisterResult;
  readonly #take: (eventId: string, runId: string | undefined, now: number) => Wait[];
  readonly #notifyRun: (notification: RunNotification) => Notification;
  readonly #claim: (now: number, leaseMs: number, limit: number) => Wait[];
  readonly #list: Database.Statement;
  readonly #delete: Database.Statement;
  readonly #prune: (runIds: readonly string[], options: { dryRun: boolean }) => number;

  constructor(db: Database.Database) {
    const oldestKept = db.prepare(
      'SELECT seq, data FROM qstash_kept_events WHERE run_id = ? AND event_id = ? AND keep_until > ? ORDER BY seq LIMIT 1',
    );
    const dropKept = db.prepare('DELETE FROM qstash_kept_events WHERE seq = ?');
    const insert = db.prepare(`INSERT INTO qstash_waits (run_id, event_id, step_id, waiter, created_at, deadline)
      VALUES (@run_id, @event_id, @step_id, @waiter, @created_at, @deadline)
      ON CONFLICT (run_id, event_id, step_id) DO UPDATE SET waiter = excluded.waiter, deadline = excluded.deadline, fire_until = NULL`);
    const free = '(fire_until IS NULL OR fire_until <= @now)';
    const ended = `EXISTS (SELECT 1 FROM runs r WHERE r.id = qstash_waits.run_id AND r.status IN (${ENDED}))`;
    // A run that ended (cancelled, failed, completed) waits no more: its waits are dropped, never notified.
    const dropEnded = db.prepare(`DELETE FROM qstash_waits WHERE event_id = @eventId AND ${ended}`);
    const takeEvent = db.prepare(`DELETE FROM qstash_waits WHERE event_id = @eventId AND ${free} RETURNING *`);
    const takeRunEvent = db.prepare(
      `DELETE FROM qstash_waits WHERE event_id = @eventId AND run_id = @runId AND ${free} RETURNING *`,
    );
    const keep = db.prepare(
      'INSERT INTO qstash_kept_events (run_id, event_id, data, created_at, keep_until) VALUES (?, ?, ?, ?, ?)',
    );
    const keptOfPair = db
      .prepare('SELECT COUNT(*) FROM qstash_kept_events WHERE run_id = ? AND event_id = ? AND keep_until > ?')
      .pluck();
    const lease = db.prepare(`UPDATE qstash_waits SET fire_until = @until WHERE rowid IN (
      SELECT rowid FROM qstash_waits WHERE deadline <= @now AND ${free} ORDER BY deadline LIMIT @limit) RETURNING *`);
    const purgeKept = db.prepare('DELETE FROM qstash_kept_events WHERE keep_until <= ?');
    this.#list = db.prepare(
      `SELECT * FROM qstash_waits WHERE event_id = ? AND NOT ${ended} ORDER BY created_at, run_id LIMIT ?`,
    );
    this.#delete = db.prepare('DELETE FROM qstash_waits WHERE run_id = ? AND event_id = ? AND step_id = ?');

    const take = (eventId: string, runId: string | undefined, now: number): Wait[] => {
      dropEnded.run({ eventId });
      return (
        (runId === undefined ? takeEvent.all({ eventId, now }) : takeRunEvent.all({ eventId, runId, now })) as WaitRow[]
      ).map(toWait);
    };
    const register = db.transaction((wait: Wait, now: number): RegisterResult => {
      const kept = oldestKept.get(wait.runId, wait.eventId, now) as { seq: number; data: string } | undefined;
      if (kept) {
        dropKept.run(kept.seq);
        return { kind: 'kept-event', data: kept.data };
      }
      insert.run(waitRow(wait));
      return { kind: 'waiting' };
    });
    this.#register = (wait, now) => register.immediate(wait, now);
    const takeTx = db.transaction(take);
    this.#take = (eventId, runId, now) => takeTx.immediate(eventId, runId, now);
    const notifyRun = db.transaction((notification: RunNotification): Notification => {
      const { runId, eventId, now, maxKept = Infinity } = notification;
      const waits = take(eventId, runId, now);
      if (waits.length > 0) return { waits, kept: false };
      const full = Number.isFinite(maxKept) && (keptOfPair.get(runId, eventId, now) as number) >= maxKept;
      if (full) return { waits, kept: false };
      keep.run(runId, eventId, notification.data, now, notification.keepUntil);
      return { waits, kept: true };
    });
    this.#notifyRun = (notification) => notifyRun.immediate(notification);
    const claim = db.transaction((now: number, leaseMs: number, limit: number) => {
      purgeKept.run(now);
      return (lease.all({ now, until: now + leaseMs, limit: Math.max(0, Math.trunc(limit)) }) as WaitRow[]).map(toWait);
    });
    this.#claim = (now, leaseMs, limit) => claim.immediate(now, leaseMs, limit);
    const ofRun = (verb: string, table: string) => db.prepare(`${verb} FROM ${table} WHERE run_id = ?`);
    const [countWaits, countKept] = [
      ofRun('SELECT COUNT(*)', 'qstash_waits').pluck(),
      ofRun('SELECT COUNT(*)', 'qstash_kept_events').pluck(),
    ];
    const [deleteWaits, deleteKept] = [ofRun('DELETE', 'qstash_waits'), ofRun('DELETE', 'qstash_kept_events')];
    const prune = db.transaction((runIds: readonly string[], { dryRun }: { dryRun: boolean }): number => {
      let rows = 0;
      for (const id of runIds) {
        rows += dryRun
          ? (countWaits.get(id) as number) + (countKept.get(id) as number)
          : deleteWaits.run(id).changes + deleteKept.run(id).changes;
      }
      return rows;
    });
    this.#prune = (runIds, options) => prune.immediate(runIds, options);
  }

  async register(wait: Wait, now: number): Promise<RegisterResult> {
    return this.#register(wait, now);
  }
  async takeWaits(eventId: string, now: number): Promise<Wait[]> {
    return this.#take(eventId, undefined, now);
  }
  async notifyRun(notification: RunNotification): Promise<Notification> {
    return this.#notifyRun(notification);
  }
  async listWaits(eventId: string, limit: number): Promise<Wait[]> {
    return (this.#list.all(eventId, Math.max(0, Math.trunc(limit))) as WaitRow[]).map(toWait);
  }
  async claimTimedOut(now: number, leaseMs: number, limit: number): Promise<Wait[]> {
    return this.#claim(now, leaseMs, limit);
  }
  async deleteWait(runId: string, eventId: string, stepId: number): Promise<void> {
    this.#delete.run(runId, eventId, stepId);
  }
  async pruneRuns(runIds: readonly string[], options: { dryRun: boolean }): Promise<number> {
    return runIds.length === 0 ? 0 : this.#prune(runIds, options);
  }
}
