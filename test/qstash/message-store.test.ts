import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openQstashStores } from '../../runner-core/qstash/stores.js';
import type { MessageStore, NewMessage } from '../../runner-core/qstash/messages/store.js';
import { openPostgresStore, type PostgresStore } from '../../runner-core/store/postgres/store.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Store } from '../../runner-core/store/types.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { NOW, testMessage } from './message-fixtures.js';

/**
 * The QStash message store on SQLite and PostgreSQL: runs created once, leases that two claimers
 * never share, settling fenced by the lease's holder, deduplication, a run's messages in order.
 */

let pg: PostgresCluster | undefined;
const opened: Store[] = [];
let schemas = 0;

beforeAll(async () => {
  pg = await startPostgres({ database: 'qstash_messages' });
}, 300_000);

afterAll(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
  await pg?.stop();
});

const message = testMessage;

const kinds: [string, () => Promise<MessageStore>][] = [
  [
    'sqlite',
    async () => {
      const store = openSqliteStore(':memory:');
      opened.push(store);
      return openQstashStores(store.connection)!.messages;
    },
  ],
  [
    'postgres',
    async () => {
      const store: PostgresStore = await openPostgresStore(pg!.url, {
        schema: `qstash_${++schemas}`,
        leaseClock: 'caller',
      });
      opened.push(store);
      return openQstashStores(store.connection)!.messages;
    },
  ],
];

describe.each(kinds)('QStash message store (%s)', (_name, open) => {
  it('creates a run once, with its first message first in its list', async () => {
    const messages = await open();
    const run = {
      id: 'wfr_a',
      url: 'http://127.0.0.1:9/wf',
      body: '{}',
      headers: {},
      retries: 3,
      retryDelayMs: 1000,
      idempotencyKey: null,
      config: '{}',
      now: NOW,
    };
    expect(
      (await messages.createRun(run, message('m1', { runId: 'wfr_a', callType: 'step', kind: 'workflow' }))).created,
    ).toBe(true);
    expect(
      (await messages.createRun(run, message('m1b', { runId: 'wfr_a', callType: 'step', kind: 'workflow' }))).created,
    ).toBe(false);
    await messages.insertMessages([
      message('m2', { runId: 'wfr_a', callType: 'step', kind: 'workflow' }),
      message('m3', { runId: 'wfr_a', callType: 'toCallback' }),
    ]);
    expect((await messages.runMessages('wfr_a')).map((m) => [m.id, m.callType, m.body])).toEqual([
      ['m1', 'step', 'm1'],
      ['m2', 'step', 'm2'],
      ['m3', 'toCallback', 'm3'],
    ]);
    expect(await messages.runConfig('wfr_a')).toBe('{}');
    expect(await messages.nextAttemptSeq('wfr_a', NOW)).toBe(1);
    expect(await messages.nextAttemptSeq('wfr_a', NOW)).toBe(2);
  });

  it('lists its runs newest start first, ties by id, from a cursor on', async () => {
    const messages = await open();
    const started: [string, number][] = [
      ['wfr_z', NOW],
      ['wfr_b', NOW + 1],
      ['wfr_a', NOW + 1],
      ['wfr_y', NOW + 2],
    ];
    for (const [id, now] of started) {
      const run = {
        id,
        url: 'http://127.0.0.1:9/wf',
        body: '{}',
        headers: {},
        retries: 0,
        retryDelayMs: 0,
        idempotencyKey: null,
        config: '{}',
        now,
      };
      await messages.createRun(run, message(`m-${id}`, { runId: id, callType: 'step', kind: 'workflow', now }));
    }
    const order = ['wfr_y', 'wfr_b', 'wfr_a', 'wfr_z'];
    expect((await messages.runsByStart(undefined, 10)).map((r) => r.id)).toEqual(order);
    const [first, second] = await messages.runsByStart(undefined, 2);
    expect(second).toEqual({ id: 'wfr_b', createdAt: NOW + 1 });
    expect((await messages.runsByStart(second, 10)).map((r) => r.id)).toEqual(['wfr_a', 'wfr_z']);
    expect((await messages.runsByStart(first, 1)).map((r) => r.id)).toEqual(['wfr_b']);
  });

  it('keeps the messages of runs failed for good as dead letters, newest first, until deleted', async () => {
    const messages = await open();
    for (const id of ['wfr_d1', 'wfr_d2']) {
      const run = {
        id,
        url: 'http://127.0.0.1:9/wf',
        body: '{}',
        headers: {},
        retries: 0,
        retryDelayMs: 0,
        idempotencyKey: null,
        config: '{}',
        now: NOW,
      };
      await messages.createRun(run, message(`first-${id}`, { runId: id, callType: 'step', kind: 'workflow' }));
    }
    await messages.insertMessages([message('plain-failed')]);
    const claimed = await messages.claimDue({ now: NOW, limit: 10, owner: 'one', leaseMs: 5_000 });
    expect(claimed.map((m) => m.id).sort()).toEqual(['first-wfr_d1', 'first-wfr_d2', 'plain-failed']);
    for (const m of claimed) await messages.settle(m.id, 'one', { status: 'failed' }, NOW + 5);
    // A plain message (no run) is no workflow's: not in the DLQ.
    const letters = await messages.deadLetters({ limit: 10 });
    expect(letters.map((l) => [l.id, l.failedAt])).toEqual([
      ['first-wfr_d2', NOW + 5],
      ['first-wfr_d1', NOW + 5],
    ]);
    expect((await messages.deadLetters({ limit: 10, beforeSeq: letters[0]!.seq })).map((l) => l.id)).toEqual([
      'first-wfr_d1',
    ]);
    expect((await messages.deadLetters({ limit: 10, runId: 'wfr_d1' })).map((l) => l.id)).toEqual(['first-wfr_d1']);
    expect(await messages.deleteDeadLetters(['first-wfr_d1', 'plain-failed', 'nobody'])).toBe(1);
    expect((await messages.deadLetters({ limit: 10 })).map((l) => l.id)).toEqual(['first-wfr_d2']);
  });

  it('leases each due message to one claimer, and only its holder settles it', async () => {
    const messages = await open();
    await messages.insertMessages([message('a'), message('b'), message('later', { dueAt: NOW + 60_000 })]);
    const [first, second] = await Promise.all([
      messages.claimDue({ now: NOW, limit: 10, owner: 'one', leaseMs: 5_000 }),
      messages.claimDue({ now: NOW, limit: 10, owner: 'two', leaseMs: 5_000 }),
    ]);
    const ids = [...first!, ...second!].map((m) => m.id).sort();
    expect(ids).toEqual(['a', 'b']);
    const holder = first!.some((m) => m.id === 'a') ? 'one' : 'two';
    expect(await messages.settle('a', holder === 'one' ? 'two' : 'one', { status: 'delivered' }, NOW)).toBe(false);
    expect(await messages.settle('a', holder, { status: 'pending', dueAt: NOW + 1_000, retried: 1 }, NOW)).toBe(true);
    // Leased, not due, delivered: nothing to claim now; the retry is due a second later.
    expect(await messages.claimDue({ now: NOW, limit: 10, owner: 'three', leaseMs: 5_000 })).toEqual([]);
    const retried = await messages.claimDue({ now: NOW + 1_000, limit: 10, owner: 'three', leaseMs: 5_000 });
    expect(retried.map((m) => [m.id, m.retried])).toEqual([['a', 1]]);
    // A lease that ran out is anyone's.
    expect(
      (await messages.claimDue({ now: NOW + 10_000, limit: 10, owner: 'four', leaseMs: 5_000 }))
        .map((m) => m.id)
        .sort(),
    ).toEqual(['a', 'b']);
    expect(await messages.nextDueAt()).toBe(NOW + 15_000);
  });

  it('claims only the messages whose bodies fit the byte budget, passing a large one over, and a larger one alone', async () => {
    const messages = await open();
    const body = (id: string, bytes: number): NewMessage => {
      const m = message(id);
      return { ...m, spec: { ...m.spec, body: 'x'.repeat(bytes) } };
    };
    // Oldest due first: a 40 kB body between two small ones.
    await messages.insertMessages([
      body('small-1', 100),
      { ...body('large', 40_000), dueAt: NOW + 1 },
      { ...body('small-2', 100), dueAt: NOW + 2 },
    ]);
    const claim = (owner: string, maxBytes: number, atLeastOne: boolean) =>
      messages.claimDue({ now: NOW + 10, limit: 10, owner, leaseMs: 5_000, maxBytes, atLeastOne });
    // 10 kB left: the large one is passed over, the small ones after it still go, whole.
    const small = await claim('one', 10_000, false);
    expect(small.map((m) => [m.id, m.spec.body.length])).toEqual([
      ['small-1', 100],
      ['small-2', 100],
    ]);
    expect(await claim('two', 10_000, false)).toEqual([]);
    // Nothing else in flight: the one larger than the whole budget goes, alone.
    expect((await claim('two', 10_000, true)).map((m) => [m.id, m.spec.body.length])).toEqual([['large', 40_000]]);
  });

  it('answers a repeated deduplication key with the first message, and cancels the pending messages of a run but its failure call', async () => {
    const messages = await open();
    const [one, two] = await messages.insertMessages([
      message('d1', { dedupKey: 'id:k' }),
      message('d2', { dedupKey: 'id:k' }),
    ]);
    expect(one).toEqual({ id: 'd1', deduplicated: false });
    expect(two).toEqual({ id: 'd1', deduplicated: true });
    const run = {
      id: 'wfr_c',
      url: 'http://127.0.0.1:9/wf',
      body: '',
      headers: {},
      retries: 0,
      retryDelayMs: 0,
      idempotencyKey: null,
      config: '{}',
      now: NOW,
    };
    await messages.createRun(run, message('c1', { runId: 'wfr_c', callType: 'step', kind: 'workflow' }));
    await messages.insertMessages([message('c2', { runId: 'wfr_c', callType: 'failureCall' })]);
    expect(await messages.cancelPending('wfr_c', NOW)).toBe(1);
    expect((await messages.runMessages('wfr_c')).map((m) => [m.id, m.status])).toEqual([
      ['c1', 'cancelled'],
      ['c2', 'pending'],
    ]);
  });

  it('holds a flow key to its parallelism across claims', async () => {
    const messages = await open();
    const flow = { key: 'k', parallelism: 1 };
    await messages.insertMessages([message('f1', { flow }), message('f2', { flow }), message('free')]);
    const claimed = await messages.claimDue({ now: NOW, limit: 10, owner: 'one', leaseMs: 5_000 });
    expect(claimed.map((m) => m.id).sort()).toEqual(['f1', 'free']);
    expect(await messages.claimDue({ now: NOW + 500, limit: 10, owner: 'two', leaseMs: 5_000 })).toEqual([]);
    await messages.settle('f1', 'one', { status: 'delivered' }, NOW + 600);
    expect(
      (await messages.claimDue({ now: NOW + 700, limit: 10, owner: 'two', leaseMs: 5_000 })).map((m) => m.id),
    ).toEqual(['f2']);
  });

  it('holds a flow key to its rate: deliveries started per period, retries included', async () => {
    const messages = await open();
    const flow = { key: 'r', rate: 1, periodMs: 1_000 };
    await messages.insertMessages([message('r1', { flow }), message('r2', { flow })]);
    expect((await messages.claimDue({ now: NOW, limit: 10, owner: 'one', leaseMs: 5_000 })).map((m) => m.id)).toEqual([
      'r1',
    ]);
    await messages.settle('r1', 'one', { status: 'delivered' }, NOW + 10);
    // The rate's slot is spent until a period after the first delivery started.
    expect(await messages.claimDue({ now: NOW + 500, limit: 10, owner: 'one', leaseMs: 5_000 })).toEqual([]);
    expect(
      (await messages.claimDue({ now: NOW + 1_001, limit: 10, owner: 'one', leaseMs: 5_000 })).map((m) => m.id),
    ).toEqual(['r2']);
  });
});
