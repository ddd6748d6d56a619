import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, ClientError } from '../../serve/client.js';
import { SqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Run } from '../../runner-core/store/types.js';
import { TEST_TOKEN, startApp, startTestRunner, type TestApp, type TestRunner } from '../helpers/runner.js';

/** Cron schedules on a real runner (real HTTP on 127.0.0.1, real SQLite file, a real app). */

let runners: TestRunner[] = [];
let app: TestApp | undefined;
afterEach(async () => {
  await app?.close();
  for (const r of runners) await r.close();
  runners = [];
  app = undefined;
});

async function runnerOn(dbPath?: string): Promise<TestRunner> {
  const runner = await startTestRunner({ dbPath, api: { openOnLoopback: false }, runner: { pollMs: 100 } });
  runners.push(runner);
  return runner;
}

/** Runs a schedule started, by the tick time in their idempotency key. */
async function runsOf(runner: TestRunner, scheduleId: string): Promise<Array<{ run: Run; tick: number }>> {
  const { runs } = await runner.store.listRuns({ limit: 500 });
  const prefix = `schedule:${scheduleId}:`;
  return runs
    .filter((r) => r.idempotencyKey?.startsWith(prefix))
    .map((run) => ({ run, tick: Number(run.idempotencyKey!.slice(prefix.length)) }));
}

/** Polls `check` every 50 ms until it returns a value, at most `timeoutMs`. */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Expected ${what} within ${timeoutMs} ms; it did not happen.`);
}

describe('schedules', () => {
  it('are created, listed and deleted through the Client; bad input is a 400 naming the field', async () => {
    const runner = await runnerOn();
    const client = new Client({ runnerUrl: runner.url, token: TEST_TOKEN });
    const created = await client.schedules.create({
      url: 'http://127.0.0.1:9/wf',
      cron: '0 9 * * 1-5',
      body: { report: 'daily' },
      timezone: 'Europe/Paris',
      headers: { authorization: 'Bearer secret' },
    });
    expect(created).toMatchObject({
      url: 'http://127.0.0.1:9/wf',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      body: '{"report":"daily"}',
      lastFiredAt: null,
    });
    expect(created.id).toMatch(/^wfs_/);
    expect(created.headers.authorization).not.toBe('Bearer secret');
    expect(created.nextAt).toBeGreaterThan(Date.now());
    // 09:00 in Paris is 07:00 or 08:00 UTC, never 09:00.
    expect([7, 8]).toContain(new Date(created.nextAt).getUTCHours());
    expect(await client.schedules.list()).toEqual([created]);

    const badCron = await client.schedules
      .create({ url: 'http://127.0.0.1:9/wf', cron: '61 * * * *' })
      .catch((e: unknown) => e);
    expect(badCron).toBeInstanceOf(ClientError);
    expect((badCron as ClientError).status).toBe(400);
    expect((badCron as ClientError).message).toContain('`cron`');
    const badZone = await client.schedules
      .create({ url: 'http://127.0.0.1:9/wf', cron: '* * * * *', timezone: 'Mars/Olympus' })
      .catch((e: unknown) => e);
    expect((badZone as ClientError).status).toBe(400);
    expect((badZone as ClientError).message).toContain('`timezone`');
    const badOrigin = await client.schedules
      .create({ url: 'https://elsewhere.example/wf', cron: '* * * * *' })
      .catch((e: unknown) => e);
    expect((badOrigin as ClientError).status).toBe(403);

    await client.schedules.delete(created.id);
    expect(await client.schedules.list()).toEqual([]);
    const missing = await client.schedules.delete(created.id).catch((e: unknown) => e);
    expect((missing as ClientError).status).toBe(404);
  });

  it('a 7-field cron is a 400 naming the field count and the expression', async () => {
    const runner = await runnerOn();
    const client = new Client({ runnerUrl: runner.url, token: TEST_TOKEN });
    const error = await client.schedules
      .create({ url: 'http://127.0.0.1:9/wf', cron: '0 0 9 * * 1-5 2030' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).status).toBe(400);
    expect((error as ClientError).message).toContain('got 7 fields: "0 0 9 * * 1-5 2030"');
    expect(await client.schedules.list()).toEqual([]);
  });

  it('a schedule whose origin is no longer allowed skips its ticks, shows the refusal, and logs it once', async () => {
    const errors: string[] = [];
    const logger = { info: () => {}, warn: () => {}, error: (message: string) => errors.push(message) };
    const runner = await startTestRunner({
      api: { openOnLoopback: false },
      runner: { pollMs: 100, allowedOrigins: ['https://app.example'], logger },
    });
    runners.push(runner);
    // Created while its origin was allowed (stored directly: the API would refuse it now).
    const id = 'wfs_refused-origin';
    const url = 'http://127.0.0.1:9/wf';
    await runner.store.schedules.createSchedule({
      id,
      url,
      cron: '* * * * * *',
      timezone: 'UTC',
      body: '',
      headers: {},
      nextAt: Date.now(),
      lastFiredAt: null,
      lastRefusal: null,
      createdAt: Date.now(),
    });
    const client = new Client({ runnerUrl: runner.url, token: TEST_TOKEN });
    const first = await until(
      'a first refused tick',
      async () => (await client.schedules.list())[0]?.lastRefusal ?? undefined,
    );
    expect(first).toMatchObject({ code: 'ORIGIN_NOT_ALLOWED' });
    expect(first.message).toContain('http://127.0.0.1:9');
    // Every second a tick is refused and skipped; the ticker looks 4 times a second meanwhile.
    const later = await until('two more refused ticks', async () => {
      const [schedule] = await client.schedules.list();
      return schedule!.lastRefusal!.tick >= first.tick + 2_000 ? schedule : undefined;
    });
    expect(later.nextAt).toBeGreaterThan(later.lastRefusal!.tick);
    expect(later.lastFiredAt).toBeNull();
    expect(await runsOf(runner, id)).toEqual([]);
    expect(errors.filter((line) => line.includes(id))).toHaveLength(1);
  });

  it('an every-second schedule starts one completed run per tick in a real app', async () => {
    const runner = await runnerOn();
    app = await startApp(async (context) => context.run('echo', () => context.requestPayload), {
      token: runner.token,
      runnerUrl: runner.url,
    });
    const client = new Client({ runnerUrl: runner.url, token: TEST_TOKEN });
    const schedule = await client.schedules.create({ url: app.url, cron: '*/1 * * * * *', body: { hello: 'tick' } });
    const runs = await until('3 completed scheduled runs', async () => {
      const found = await runsOf(runner, schedule.id);
      return found.filter((r) => r.run.status === 'completed').length >= 3 ? found : undefined;
    });
    await client.schedules.delete(schedule.id);
    const ticks = runs.map((r) => r.tick);
    expect(new Set(ticks).size).toBe(ticks.length);
    for (const tick of ticks) expect(tick % 1000).toBe(0);
    expect(runs.every((r) => r.run.body === '{"hello":"tick"}')).toBe(true);
    // The runs link back to their schedule, and the API lists a schedule's runs.
    const page = await client.list({ scheduleId: schedule.id, limit: 500 });
    // (A tick may have fired between reading `runs` and the delete: the page holds at least those.)
    expect(page.runs.map((r) => r.id)).toEqual(expect.arrayContaining(runs.map((r) => r.run.id)));
    expect(page.runs.every((r) => r.scheduleId === schedule.id)).toBe(true);
    expect((await client.list({ scheduleId: 'wfs_none' })).runs).toEqual([]);
  });

  it('after 5 s of downtime fires the missed window once, not a storm', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-schedules-'));
    const dbPath = join(dir, 'runner.db');
    try {
      const first = await runnerOn(dbPath);
      app = await startApp(async (context) => context.run('echo', () => 1), {
        token: first.token,
        runnerUrl: first.url,
      });
      const schedule = await first.runner.schedules.create({ url: app.url, cron: '* * * * * *' });
      await until('a first tick', async () => ((await runsOf(first, schedule.id)).length > 0 ? true : undefined));
      await first.close();
      runners = [];
      const stoppedAt = Date.now();
      const reader = new SqliteStore(dbPath);
      const before = (await reader.schedules.getSchedule(schedule.id))!;
      await reader.close();
      // The downtime itself is the scenario: five ticks pass with no runner.
      await new Promise((r) => setTimeout(r, 5_000));
      const restartedAt = Date.now();
      const second = await runnerOn(dbPath);
      await until('the schedule to move past the restart', async () =>
        (await second.store.schedules.getSchedule(schedule.id))!.nextAt > restartedAt ? true : undefined,
      );
      const missed = (await runsOf(second, schedule.id)).filter((r) => r.tick >= before.nextAt && r.tick < restartedAt);
      expect(stoppedAt).toBeLessThan(restartedAt - 4_000);
      expect(missed.map((r) => r.tick)).toEqual([before.nextAt]);
    } finally {
      for (const r of runners) await r.close();
      runners = [];
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
