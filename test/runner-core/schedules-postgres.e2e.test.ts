import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Client } from '../../serve/client.js';
import type { PostgresStore } from '../../runner-core/store/postgres/store.js';
import { startApp, type TestApp } from '../helpers/runner.js';
import { postgresRunners } from './postgres-runners.js';

/**
 * Three `wf start` processes share one PostgreSQL database and an every-second schedule; one is
 * SIGKILLed mid-test. Every tick from the first to the last fired exactly once: one run per
 * `schedule:<id>:<tick>` key, and no second missing.
 */

const TOKEN = 'wf_schedules_pg_test_token';

let app: TestApp | undefined;

let reader: PostgresStore | undefined;
const cluster = postgresRunners('schedules');

/** Tick times of the schedule's runs, with how many runs each key has. */
async function ticks(scheduleId: string): Promise<Array<{ tick: number; n: number }>> {
  const rows = await reader!.query<{ key: string; n: number }[]>(
    'SELECT idempotency_key AS key, count(*)::int AS n FROM runs WHERE idempotency_key LIKE $1 GROUP BY idempotency_key',
    [`schedule:${scheduleId}:%`],
  );
  return rows.map((r) => ({ tick: Number(r.key.split(':')[2]), n: r.n })).sort((a, b) => a.tick - b.tick);
}

describe('schedules on PostgreSQL with three wf start runners', () => {
  it('fire each tick exactly once while one runner is SIGKILLed', async () => {
    const started = await cluster.start(TOKEN, 2000);
    const { runners } = started;
    reader = started.reader;
    const [killed, survivor] = runners;
    app = await startApp(async (context) => context.run('tick', () => 1), { token: TOKEN, runnerUrl: survivor.url });

    const client = new Client({ runnerUrl: killed.url, token: TOKEN });
    const schedule = await client.schedules.create({ url: app.url, cron: '* * * * * *', body: { from: 'cron' } });
    // Bounded waits on what the store says, not fixed sleeps: 3 ticks before the kill, 4 after.
    for (let i = 0; i < 100 && (await ticks(schedule.id)).length < 3; i++) await sleep(100);
    killed.child.kill('SIGKILL');
    await killed.exited;
    const atKill = (await ticks(schedule.id)).length;
    for (let i = 0; i < 100 && (await ticks(schedule.id)).length < atKill + 4; i++) await sleep(100);
    await new Client({ runnerUrl: survivor.url, token: TOKEN }).schedules.delete(schedule.id);

    const fired = await ticks(schedule.id);
    expect(fired.length).toBeGreaterThanOrEqual(atKill + 4);
    expect(fired.every((t) => t.n === 1)).toBe(true);
    // No tick lost across the kill: consecutive seconds from the first to the last.
    for (let i = 1; i < fired.length; i++) expect(fired[i]!.tick - fired[i - 1]!.tick).toBe(1000);
    // The runner API lists a schedule's runs from PostgreSQL too (at least every tick counted above).
    const page = await new Client({ runnerUrl: survivor.url, token: TOKEN }).list({
      scheduleId: schedule.id,
      limit: 500,
    });
    expect(page.runs.length).toBeGreaterThanOrEqual(fired.length); // a tick in flight at the delete may add one
    expect(page.runs.every((r) => r.scheduleId === schedule.id)).toBe(true);
    const runnerLines = runners.flatMap((r) => r.jsonLines());
    expect(runnerLines.filter((l) => String(l.msg).includes('could not fire'))).toEqual([]);
    // Each tick is logged once, by the runner whose start created its run.
    const firedLines = runnerLines.filter((l) => String(l.msg).startsWith(`schedule ${schedule.id} fired`));
    expect(firedLines.length).toBeGreaterThanOrEqual(fired.length - 1); // the killed runner's stdout may lose its last line
    expect(new Set(firedLines.map((l) => l.runId)).size).toBe(firedLines.length);
  }, 120_000);
});
