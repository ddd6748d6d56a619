import type Database from 'better-sqlite3';
import { scheduleRow, toSchedule, type ScheduleRow } from '../schedule-rows.js';
import { pageLimit, toRunPage, type RunRow } from '../rows.js';
import { scheduleKeyRange, type Schedule, type ScheduleRefusal, type ScheduleStore } from '../schedules.js';
import type { RunPage } from '../types.js';

/** The SQLite half of `ScheduleStore`, on the store's connection (SqliteStore delegates to it). */
export class SqliteSchedules implements ScheduleStore {
  readonly #insert: Database.Statement;
  readonly #all: Database.Statement;
  readonly #byId: Database.Statement;
  readonly #delete: Database.Statement;
  readonly #due: Database.Statement;
  readonly #advance: Database.Statement;
  readonly #refuse: Database.Statement;
  readonly #runs: Database.Statement;
  readonly #runsAfter: Database.Statement;

  constructor(db: Database.Database) {
    this.#insert =
      db.prepare(`INSERT INTO schedules (id, url, cron, timezone, body, headers, next_at, last_fired_at, created_at, last_refusal)
      VALUES (@id, @url, @cron, @timezone, @body, @headers, @next_at, @last_fired_at, @created_at, @last_refusal)`);
    this.#all = db.prepare('SELECT * FROM schedules ORDER BY created_at, id');
    this.#byId = db.prepare('SELECT * FROM schedules WHERE id = ?');
    this.#delete = db.prepare('DELETE FROM schedules WHERE id = ?');
    this.#due = db.prepare('SELECT * FROM schedules WHERE next_at <= ? ORDER BY next_at LIMIT ?');
    this.#advance = db.prepare(
      'UPDATE schedules SET next_at = ?, last_fired_at = ?, last_refusal = NULL WHERE id = ? AND next_at = ?',
    );
    this.#refuse = db.prepare('UPDATE schedules SET next_at = ?, last_refusal = ? WHERE id = ? AND next_at = ?');
    const runs = (after: string) =>
      `SELECT * FROM runs WHERE idempotency_key >= @from AND idempotency_key < @to ${after} ORDER BY id DESC LIMIT @limit`;
    this.#runs = db.prepare(runs(''));
    this.#runsAfter = db.prepare(runs('AND id < @cursor'));
  }

  async createSchedule(schedule: Schedule): Promise<void> {
    this.#insert.run(scheduleRow(schedule));
  }
  async listSchedules(): Promise<Schedule[]> {
    return (this.#all.all() as ScheduleRow[]).map(toSchedule);
  }
  async getSchedule(id: string): Promise<Schedule | undefined> {
    const row = this.#byId.get(id) as ScheduleRow | undefined;
    return row ? toSchedule(row) : undefined;
  }
  async deleteSchedule(id: string): Promise<boolean> {
    return this.#delete.run(id).changes > 0;
  }
  async dueSchedules(now: number, limit: number): Promise<Schedule[]> {
    return (this.#due.all(now, limit) as ScheduleRow[]).map(toSchedule);
  }
  async advanceSchedule(id: string, from: number, nextAt: number, firedAt: number): Promise<boolean> {
    return this.#advance.run(nextAt, firedAt, id, from).changes > 0;
  }
  async refuseTick(id: string, from: number, nextAt: number, refusal: ScheduleRefusal): Promise<boolean> {
    return this.#refuse.run(nextAt, JSON.stringify(refusal), id, from).changes > 0;
  }
  async listScheduleRuns(scheduleId: string, query: { cursor?: string; limit?: number }): Promise<RunPage> {
    const limit = pageLimit(query.limit);
    const params = { ...scheduleKeyRange(scheduleId), limit: limit + 1 };
    const rows = (
      query.cursor === undefined ? this.#runs.all(params) : this.#runsAfter.all({ ...params, cursor: query.cursor })
    ) as RunRow[];
    return toRunPage(rows, limit);
  }
}
