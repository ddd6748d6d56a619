import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StartRequest } from '../../protocol/messages.js';
import { OriginNotAllowedError } from '../../runner-core/errors.js';
import type { Logger } from '../../runner-core/telemetry/logger.js';
import { parseOriginPattern } from '../../runner-core/egress/origins.js';
import { InvalidScheduleError } from '../../runner-core/schedules/cron.js';
import { ScheduleService } from '../../runner-core/schedules/service.js';
import { openPostgresStore } from '../../runner-core/store/postgres/store.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Run, Store } from '../../runner-core/store/types.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';

/**
 * The ticker's decisions on a real store (SQLite, and PostgreSQL with a fresh schema per test) with
 * an injected clock: `tick()` is one look, so "4 times a second forever" is four calls, not a
 * second of waiting.
 */

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
const URL_ = 'http://127.0.0.1:9/wf';

let stores: Store[] = [];
afterEach(async () => {
  for (const store of stores) await store.close();
  stores = [];
});

let pg: PostgresCluster | undefined;
let schemas = 0;
beforeAll(async () => {
  pg = await startPostgres({ database: 'schedule_ticks' });
}, 300_000);
afterAll(async () => {
  await pg?.stop();
});

const opens: Record<string, () => Promise<Store>> = {
  sqlite: async () => openSqliteStore(':memory:'),
  postgres: () => openPostgresStore(pg!.url, { schema: `ticks_${++schemas}` }),
};

type Starter = (request: StartRequest) => Promise<{ run: Run; created: boolean }>;

async function setup(open: () => Promise<Store>, startRun: Starter) {
  const store = await open();
  stores.push(store);
  let now = T0;
  const errors: string[] = [];
  const logger: Logger = { info: () => {}, warn: () => {}, error: (message) => errors.push(message) };
  const service = new ScheduleService({
    store: store.schedules,
    now: () => now,
    allowedOrigins: [parseOriginPattern('http://127.0.0.1:*')],
    redact: (headers) => headers,
    startRun,
    logger,
    tickMs: 250,
  });
  return {
    store,
    service,
    errors,
    at: (ms: number) => {
      now = ms;
    },
  };
}

const refuse: Starter = async (request) => {
  throw new OriginNotAllowedError(request.url, ['https://app.example']);
};

describe.each(Object.keys(opens))('schedule ticks (%s)', (name) => {
  const open = opens[name]!;
  it('a tick whose origin is no longer allowed is skipped and recorded; the schedule moves on, logged once', async () => {
    const t = await setup(open, refuse);
    const schedule = await t.service.create({ url: URL_, cron: '* * * * *' });
    const first = schedule.nextAt;
    t.at(first);
    // The ticker looks 4 times a second: none of these looks may fire the refused tick again.
    for (let i = 0; i < 4; i++) await t.service.tick();
    const moved = (await t.store.schedules.getSchedule(schedule.id))!;
    expect(moved.nextAt).toBe(first + 60_000);
    expect(moved.lastFiredAt).toBeNull();
    expect(moved.lastRefusal).toMatchObject({ tick: first, at: first, code: 'ORIGIN_NOT_ALLOWED' });
    expect(moved.lastRefusal!.message).toContain(URL_);
    expect(t.errors).toHaveLength(1);
    expect(t.errors[0]).toContain(schedule.id);

    // The next tick is refused too: recorded, skipped, not logged again.
    t.at(first + 60_000);
    await t.service.tick();
    const again = (await t.store.schedules.getSchedule(schedule.id))!;
    expect(again.nextAt).toBe(first + 120_000);
    expect(again.lastRefusal!.tick).toBe(first + 60_000);
    expect(t.errors).toHaveLength(1);
  });

  it('a tick that fires after refusals clears the refusal', async () => {
    let allowed = false;
    const t = await setup(open, async (request) => {
      if (!allowed) return refuse(request);
      return { run: { id: 'wfr_x' } as Run, created: true };
    });
    const schedule = await t.service.create({ url: URL_, cron: '* * * * *' });
    t.at(schedule.nextAt);
    await t.service.tick();
    expect((await t.store.schedules.getSchedule(schedule.id))!.lastRefusal).not.toBeNull();
    allowed = true;
    t.at(schedule.nextAt + 60_000);
    await t.service.tick();
    const fired = (await t.store.schedules.getSchedule(schedule.id))!;
    expect(fired.lastRefusal).toBeNull();
    expect(fired.lastFiredAt).toBe(schedule.nextAt + 60_000);
  });

  it('a transient failure keeps the tick and backs off instead of retrying every look', async () => {
    let calls = 0;
    let failing = true;
    const t = await setup(open, async () => {
      calls++;
      if (failing) throw new Error('database is locked');
      return { run: { id: 'wfr_x' } as Run, created: true };
    });
    const schedule = await t.service.create({ url: URL_, cron: '* * * * *' });
    const tickAt = schedule.nextAt;
    t.at(tickAt);
    await t.service.tick();
    expect(calls).toBe(1);
    // Looks within the first backoff (at least half of 1 s, equal jitter) do not try again.
    for (const ms of [250, 400]) {
      t.at(tickAt + ms);
      await t.service.tick();
    }
    expect(calls).toBe(1);
    expect(t.errors).toHaveLength(1);
    // Once the backoff passed, the same tick is tried again (it was not skipped) and fires.
    failing = false;
    t.at(tickAt + 1_000);
    await t.service.tick();
    expect(calls).toBe(2);
    const fired = (await t.store.schedules.getSchedule(schedule.id))!;
    expect(fired.nextAt).toBe(tickAt + 60_000);
    expect(fired.lastFiredAt).toBe(tickAt + 1_000);
  });

  it('a repeated transient failure waits longer each time, at most a minute', async () => {
    let calls = 0;
    const t = await setup(open, async () => {
      calls++;
      throw new Error('database is locked');
    });
    const schedule = await t.service.create({ url: URL_, cron: '0 0 1 1 *' });
    let now = schedule.nextAt;
    const triedAt: number[] = [];
    // Looks every second for 10 simulated minutes: the backoff tries about 15 times, not 600.
    for (; now < schedule.nextAt + 600_000; now += 1_000) {
      t.at(now);
      const before = calls;
      await t.service.tick();
      if (calls > before) triedAt.push(now);
    }
    const gaps = triedAt.slice(1).map((at, i) => at - triedAt[i]!);
    expect(triedAt.length).toBeLessThan(30);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(60_000 + 1_000);
    expect(gaps.at(-1)!).toBeGreaterThanOrEqual(30_000);
  });

  it('refuses a cron of any field count but 5 or 6, naming the count and the expression', async () => {
    const t = await setup(open, refuse);
    for (const cron of ['0 0 9 * * 1-5 2030', '* * * *', '@daily']) {
      const error = await t.service.create({ url: URL_, cron }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidScheduleError);
      expect((error as InvalidScheduleError).field).toBe('cron');
      const count = cron.split(' ').length;
      expect((error as Error).message).toContain(`${count} field${count === 1 ? '' : 's'}`);
      expect((error as Error).message).toContain(`"${cron}"`);
    }
    expect(await t.store.schedules.listSchedules()).toEqual([]);
    for (const cron of ['*/5 * * * *', '30 */5 * * * *', '  0 9 * * 1-5  '])
      await expect(t.service.create({ url: URL_, cron })).resolves.toMatchObject({ cron: cron.trim() });
  });
});
