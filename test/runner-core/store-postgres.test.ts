import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PG_MIGRATIONS } from '../../runner-core/store/migrations/postgres.js';
import {
  openPostgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
} from '../../runner-core/store/postgres/store.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { describeStore, newRun } from './store-suite.js';

/**
 * The shared `Store` suite against PostgreSQL: a throw-away cluster for this file, a fresh schema
 * per test. The suite injects time, so it runs with `leaseClock: 'caller'`; the database clock
 * (the default) has its own tests below.
 */

let pg: PostgresCluster | undefined;
const stores: PostgresStore[] = [];
let schemas = 0;
let lastSchema = '';

beforeAll(async () => {
  pg = await startPostgres({ database: 'store_suite' });
}, 300_000);

afterAll(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close().catch(() => {})));
  await pg?.stop();
});

async function open(options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const store = await openPostgresStore(pg!.url, { leaseClock: 'caller', ...options });
  stores.push(store);
  return store;
}

describeStore('postgres', () => open({ schema: (lastSchema = `suite_${++schemas}`) }), {
  peer: () => open({ schema: lastSchema }),
});

describe('postgres store', () => {
  it('migrates once when many runners start at the same moment', async () => {
    const schema = `many_${++schemas}`;
    const opened = await Promise.all(Array.from({ length: 8 }, () => open({ schema })));
    const [first] = opened;
    const versions = await first!.query<{ version: number }[]>('SELECT version FROM wfkit_migrations ORDER BY version');
    expect(versions.map((row) => row.version)).toEqual(PG_MIGRATIONS.map((_, i) => i + 1));
    await first!.createRun(newRun(1));
    // Reopening finds the schema current and keeps the data.
    const again = await open({ schema });
    expect((await again.getRun(newRun(1).id))?.status).toBe('queued');
  });

  it('refuses a schema written by a newer wfkit', async () => {
    const schema = `newer_${++schemas}`;
    const store = await open({ schema });
    await store.query('INSERT INTO wfkit_migrations (version) VALUES ($1)', [PG_MIGRATIONS.length + 1]);
    await expect(openPostgresStore(pg!.url, { schema })).rejects.toThrow(/at most/);
  });

  it('rejects steps of an unknown run, a patch of an unknown run, and a bad schema name', async () => {
    const store = await open({ schema: `unknown_${++schemas}` });
    await expect(
      store.apply([{ type: 'step-started', runId: 'wfr_nope', index: 0, name: 'a', kind: 'run', group: null, at: 1 }]),
    ).rejects.toThrow(/foreign key/);
    await expect(
      store.apply([{ type: 'run', runId: 'wfr_nope', patch: { status: 'running' }, at: 1 }]),
    ).rejects.toThrow(/wfr_nope/);
    await expect(openPostgresStore(pg!.url, { schema: 'Robert"; DROP TABLE runs' })).rejects.toThrow(/schema name/);
  });

  it('refuses releaseAll: several runners share the store', async () => {
    const store = await open({ schema: `release_all_${++schemas}` });
    await expect(store.releaseAll()).rejects.toThrow(/not available on the PostgreSQL store/);
  });

  it('stores fractional step durations from a route and rounds times to whole milliseconds', async () => {
    const store = await open({ schema: `fractions_${++schemas}` });
    const { run } = await store.createRun(newRun(1));
    await store.apply([
      {
        type: 'step-succeeded',
        runId: run.id,
        index: 0,
        name: 's',
        kind: 'run',
        output: null,
        at: 1_700_000_000_100,
        durationMs: 0.375,
      },
    ]);
    expect((await store.listSteps(run.id))[0]).toMatchObject({
      durationMs: 0.375,
      startedAt: 1_700_000_000_100,
      finishedAt: 1_700_000_000_100,
    });
  });

  describe("leases on the database's clock (the default)", () => {
    const HOUR = 3_600_000;

    it('lets runners with skewed clocks agree on when a lease ends', async () => {
      const schema = `clock_${++schemas}`;
      const behind = await open({ schema, leaseClock: 'database' });
      const ahead = await open({ schema, leaseClock: 'database' });
      const { run } = await behind.createRun(newRun(1, { now: Date.now() - HOUR }));
      // The runner whose clock is an hour behind leases the run for 600 ms of the server's time…
      expect(
        (await behind.claimDue({ owner: 'behind', leaseMs: 600, now: Date.now() - HOUR, limit: 10 })).map((r) => r.id),
      ).toEqual([run.id]);
      // …and the one an hour ahead cannot take it: by its own clock the lease ended long ago.
      expect(await ahead.claimDue({ owner: 'ahead', leaseMs: 600, now: Date.now() + HOUR, limit: 10 })).toEqual([]);
      expect((await ahead.stats(Date.now() + HOUR)).due).toBe(0);
      // Renewal (the runner passes its now + lease) extends it by the lease, on the server's clock.
      await behind.renew([run.id], 'behind', Date.now() + 1_500);
      const renewedAt = Date.now();
      expect(await ahead.claimDue({ owner: 'ahead', leaseMs: 600, now: Date.now() + HOUR, limit: 10 })).toEqual([]);
      // Once the server's clock passes the lease's end, the other runner takes the run over.
      const taken = await vi.waitFor(
        async () => {
          const claimed = await ahead.claimDue({ owner: 'ahead', leaseMs: 600, now: Date.now() + HOUR, limit: 10 });
          if (claimed.length === 0) throw new Error('not yet');
          return claimed;
        },
        { timeout: 5_000, interval: 50 },
      );
      expect(taken.map((r) => r.id)).toEqual([run.id]);
      expect(Date.now() - renewedAt).toBeGreaterThanOrEqual(1_400);
    });

    it("reports a lease's end in this machine's time to the scheduler", async () => {
      const store = await open({ schema: `next_due_${++schemas}`, leaseClock: 'database' });
      const now = Date.now();
      const { run } = await store.createRun(newRun(1, { now }));
      expect((await store.claimDue({ owner: 'a', leaseMs: 10_000, now, limit: 10 })).map((r) => r.id)).toEqual([
        run.id,
      ]);
      const next = await store.nextDueAt();
      expect(next).toBeGreaterThanOrEqual(now + 9_000);
      expect(next).toBeLessThanOrEqual(Date.now() + 10_000);
    });
  });
});

describe('postgres retention', () => {
  it('lets one runner of a database prune at a time (an advisory lock per schema)', async () => {
    const schema = `prune_lock_${++schemas}`;
    const [a, b] = await Promise.all([open({ schema }), open({ schema })]);
    const elsewhere = await open({ schema: `prune_lock_other_${schemas}` });
    const inner = await a.retention.exclusively(async () => ({
      sameSchema: await b.retention.exclusively(async () => 'b'),
      otherSchema: await elsewhere.retention.exclusively(async () => 'elsewhere'),
    }));
    expect(inner).toEqual({
      ran: true,
      value: { sameSchema: { ran: false }, otherSchema: { ran: true, value: 'elsewhere' } },
    });
    // Released once the work ends, also when it throws.
    await expect(a.retention.exclusively(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await b.retention.exclusively(async () => 'b')).toEqual({ ran: true, value: 'b' });
  });
});
