import type { Sql } from 'postgres';
import { scheduleRow, toSchedule, type ScheduleRow } from '../schedule-rows.js';
import { pageLimit, toRunPage, type RunRow } from '../rows.js';
import { scheduleKeyRange, type Schedule, type ScheduleRefusal, type ScheduleStore } from '../schedules.js';
import type { RunPage } from '../types.js';

/**
 * The PostgreSQL half of `ScheduleStore` (PostgresStore delegates to it). Exactly-once firing does
 * not rest on locks here: a tick's run carries the idempotency key `schedule:<id>:<tick>`, and
 * `advanceSchedule` is a compare-and-set, so racing runners start one run and advance once.
 */
export class PostgresSchedules implements ScheduleStore {
  readonly #sql: Sql<{ bigint: number }>;
  constructor(sql: Sql<{ bigint: number }>) {
    this.#sql = sql;
  }
  async createSchedule(schedule: Schedule): Promise<void> {
    const r = scheduleRow(schedule);
    await this
      .#sql`INSERT INTO schedules (id, url, cron, timezone, body, headers, next_at, last_fired_at, created_at, last_refusal)
      VALUES (${r.id}, ${r.url}, ${r.cron}, ${r.timezone}, ${r.body}, ${r.headers}, ${r.next_at}, ${r.last_fired_at}, ${r.created_at}, ${r.last_refusal})`;
  }
  async listSchedules(): Promise<Schedule[]> {
    return (await this.#sql<ScheduleRow[]>`SELECT * FROM schedules ORDER BY created_at, id`).map(toSchedule);
  }
  async getSchedule(id: string): Promise<Schedule | undefined> {
    const [row] = await this.#sql<ScheduleRow[]>`SELECT * FROM schedules WHERE id = ${id}`;
    return row ? toSchedule(row) : undefined;
  }
  async deleteSchedule(id: string): Promise<boolean> {
    return (await this.#sql`DELETE FROM schedules WHERE id = ${id}`).count > 0;
  }
  async dueSchedules(now: number, limit: number): Promise<Schedule[]> {
    // SKIP LOCKED: a schedule another runner is advancing right now is its to fire.
    return (
      await this.#sql<
        ScheduleRow[]
      >`SELECT * FROM schedules WHERE next_at <= ${now} ORDER BY next_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`
    ).map(toSchedule);
  }
  async advanceSchedule(id: string, from: number, nextAt: number, firedAt: number): Promise<boolean> {
    return (
      (
        await this
          .#sql`UPDATE schedules SET next_at = ${nextAt}, last_fired_at = ${firedAt}, last_refusal = NULL WHERE id = ${id} AND next_at = ${from}`
      ).count > 0
    );
  }
  async refuseTick(id: string, from: number, nextAt: number, refusal: ScheduleRefusal): Promise<boolean> {
    return (
      (
        await this
          .#sql`UPDATE schedules SET next_at = ${nextAt}, last_refusal = ${JSON.stringify(refusal)} WHERE id = ${id} AND next_at = ${from}`
      ).count > 0
    );
  }
  async listScheduleRuns(scheduleId: string, query: { cursor?: string; limit?: number }): Promise<RunPage> {
    const sql = this.#sql;
    const limit = pageLimit(query.limit);
    const { from, to } = scheduleKeyRange(scheduleId);
    const after = query.cursor === undefined ? sql`` : sql`AND id < ${query.cursor}`;
    const rows = await sql<
      RunRow[]
    >`SELECT * FROM runs WHERE idempotency_key >= ${from} AND idempotency_key < ${to} ${after} ORDER BY id DESC LIMIT ${limit + 1}`;
    return toRunPage(rows, limit);
  }
}
