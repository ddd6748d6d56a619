import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue, encodeValue } from '../../protocol/values.js';
import { deliveryInProgress, type InFlightMessage } from '../../runner-core/qstash/delivery/in-progress.js';
import type { MessageStore, NewMessage } from '../../runner-core/qstash/messages/store.js';
import { openQstashStores } from '../../runner-core/qstash/stores.js';
import { openPostgresStore } from '../../runner-core/store/postgres/store.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Change, Store } from '../../runner-core/store/types.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { NOW, testMessage } from './message-fixtures.js';

/**
 * Finding 10 of issue 19, at the store: what an app publishes during a delivery (a step's result)
 * is stored in one transaction with its step row and the settlement of that delivery, so a kill
 * cannot leave one without the others; a second result for the same step answers the first
 * message and writes nothing. On SQLite and PostgreSQL.
 */

let pg: PostgresCluster | undefined;
const opened: Store[] = [];
let schemas = 0;

beforeAll(async () => {
  pg = await startPostgres({ database: 'qstash_publish' });
}, 300_000);

afterAll(async () => {
  for (const store of opened.splice(0)) await store.close().catch(() => {});
  await pg?.stop();
});

const RUN = 'wfr_publish';

interface Opened {
  store: Store;
  messages: MessageStore;
}

const kinds: [string, () => Promise<Store>][] = [
  ['sqlite', async () => openSqliteStore(':memory:')],
  ['postgres', async () => openPostgresStore(pg!.url, { schema: `publish_${++schemas}`, leaseClock: 'caller' })],
];

/** A run message whose body is the SDK step `step` (deduplicated per step, as publish.ts keys it). */
function stepMessage(
  id: string,
  step: { stepId: number; concurrent?: number; targetStep?: number; out?: unknown },
): NewMessage {
  const body = JSON.stringify({
    stepName: `step ${step.targetStep ?? step.stepId}`,
    stepType: 'Run',
    concurrent: 1,
    ...step,
  });
  const made = testMessage(id, {
    runId: RUN,
    callType: 'step',
    kind: 'workflow',
    dedupKey: `step:${RUN}:${step.stepId}:${step.stepId === 0 ? (step.targetStep ?? 0) : 0}`,
  });
  return { ...made, spec: { ...made.spec, destination: 'http://127.0.0.1:9/wf', body } };
}

function succeeded(index: number, value: unknown): Change {
  return {
    type: 'step-succeeded',
    runId: RUN,
    index,
    name: `step ${index}`,
    kind: 'run',
    output: encodeValue(value, 'test') ?? null,
    at: NOW,
    durationMs: 0,
  };
}

/** A run whose first message (the payload) is being delivered by `runner-a`. */
async function runInDelivery(open: () => Promise<Store>): Promise<Opened> {
  const store = await open();
  opened.push(store);
  const messages = openQstashStores(store.connection)!.messages;
  const run = {
    id: RUN,
    url: 'http://127.0.0.1:9/wf',
    body: '{}',
    headers: {},
    retries: 3,
    retryDelayMs: 1000,
    idempotencyKey: null,
    config: '{}',
    now: NOW,
  };
  const payload = stepMessage('m1', { stepId: 0 });
  await messages.createRun(run, { ...payload, dedupKey: null, spec: { ...payload.spec, body: '{}' } });
  expect(
    (await messages.claimDue({ now: NOW, limit: 10, owner: 'runner-a', leaseMs: 60_000 })).map((m) => m.id),
  ).toEqual(['m1']);
  return { store, messages };
}

/** The ids runner-b claims at `now`. */
const claimedIds = async (messages: MessageStore, now: number): Promise<string[]> =>
  (await messages.claimDue({ now, limit: 10, owner: 'runner-b', leaseMs: 60_000 })).map((m) => m.id);
const statuses = async (messages: MessageStore) => (await messages.runMessages(RUN)).map((m) => [m.id, m.status]);
const during = (stepId: number, concurrent = 1) => [{ runId: RUN, step: { stepId, concurrent } }];

describe.each(kinds)('publishing during a delivery (%s)', (_name, open) => {
  it("stores the result, its step row and the delivery as delivered in one commit; the holder's late settle changes nothing", async () => {
    const { store, messages } = await runInDelivery(open);
    const stored = await messages.publish(
      [{ message: stepMessage('m2', { stepId: 1, out: '"one"' }), changes: [succeeded(1, 'one')] }],
      { during: during(1), returning: true, now: NOW + 5 },
    );
    expect(stored.results).toEqual([{ id: 'm2', deduplicated: false }]);
    expect(stored.held).toBe(1);
    expect(stored.applied.steps).toMatchObject([{ index: 1, status: 'succeeded' }]);
    expect(await statuses(messages)).toEqual([
      ['m1', 'delivered'],
      ['m2', 'pending'],
    ]);
    expect(decodeValue((await store.listSteps(RUN))[0]!.output!)).toBe('one');
    // The delivery ends after the publish: its answer does not make the message due again.
    expect(await messages.settle('m1', 'runner-a', { status: 'pending', dueAt: NOW + 10 }, NOW + 10)).toBe(false);
    // m2 waits for m1's answer (publish-hold.ts), then goes.
    expect(await messages.claimDue({ now: NOW + 20, limit: 10, owner: 'runner-b', leaseMs: 60_000 })).toEqual([]);
    expect(await messages.releaseHeld(RUN, 'm1')).toBe(1);
    expect(await messages.claimDue({ now: NOW + 20, limit: 10, owner: 'runner-b', leaseMs: 60_000 })).toMatchObject([
      { id: 'm2' },
    ]);
  });

  it('hands what a delivery published to the worker that read its answer: leased to it, the rest released', async () => {
    const { messages } = await runInDelivery(open);
    // A parallel group's two plan steps, published during m1.
    await messages.publish(
      [
        { message: stepMessage('m2', { stepId: 0, concurrent: 2, targetStep: 1 }), changes: [] },
        { message: stepMessage('m3', { stepId: 0, concurrent: 2, targetStep: 2 }), changes: [] },
      ],
      { during: during(0), returning: false, now: NOW + 5 },
    );
    const take = { owner: 'runner-a', until: NOW + 60_000, now: NOW + 6, maxBytes: 1_000_000, atLeastOne: true };
    // Room for one: m2 goes to runner-a with its spec, m3 is free for any claim.
    const { taken, released } = await messages.takeHeld(RUN, 'm1', { ...take, limit: 1 });
    expect(taken.map((m) => [m.id, m.spec.body])).toEqual([
      ['m2', stepMessage('m2', { stepId: 0, concurrent: 2, targetStep: 1 }).spec.body],
    ]);
    expect(released).toBe(1);
    expect(await claimedIds(messages, NOW + 7)).toEqual(['m3']);
    // m2 is runner-a's lease: its settle counts, another's does not.
    expect(await messages.settle('m2', 'runner-b', { status: 'delivered' }, NOW + 8)).toBe(false);
    expect(await messages.settle('m2', 'runner-a', { status: 'delivered' }, NOW + 8)).toBe(true);
    // Nothing held any more: a second hand-off takes nothing.
    expect(await messages.takeHeld(RUN, 'm1', { ...take, limit: 5 })).toEqual({ taken: [], released: 0 });
  });

  it('hands over nothing that does not fit the worker: no room, too large, or not yet due', async () => {
    const { messages } = await runInDelivery(open);
    await messages.publish([{ message: { ...stepMessage('m2', { stepId: 1 }), dueAt: NOW + 1_000 }, changes: [] }], {
      during: during(1),
      returning: false,
      now: NOW + 5,
    });
    const take = { owner: 'runner-a', until: NOW + 60_000, now: NOW + 6, maxBytes: 1_000_000, atLeastOne: true };
    expect(await messages.takeHeld(RUN, 'm1', { ...take, limit: 5 })).toEqual({ taken: [], released: 1 });
    expect(await claimedIds(messages, NOW + 6)).toEqual([]);
    expect(await claimedIds(messages, NOW + 1_000)).toEqual(['m2']);
  });

  it('writes nothing of a publish when any part of it fails: no message, no step row, the delivery still in flight', async () => {
    const { store, messages } = await runInDelivery(open);
    const broken: Change = { type: 'run', runId: 'wfr_nobody', patch: { failures: 1 }, at: NOW };
    await expect(
      messages.publish([{ message: stepMessage('m2', { stepId: 1 }), changes: [succeeded(1, 'one'), broken] }], {
        during: during(1),
        returning: false,
        now: NOW + 5,
      }),
    ).rejects.toThrow();
    expect(await statuses(messages)).toEqual([['m1', 'pending']]);
    expect(await store.listSteps(RUN)).toEqual([]);
    expect(await messages.settle('m1', 'runner-a', { status: 'delivered' }, NOW + 10)).toBe(true);
  });

  it('answers a second result for a step with the first message, writing no row and settling no delivery', async () => {
    const { store, messages } = await runInDelivery(open);
    await messages.publish(
      [{ message: stepMessage('m2', { stepId: 1, out: '"first"' }), changes: [succeeded(1, 'first')] }],
      { during: during(1), returning: false, now: NOW + 5 },
    );
    await messages.releaseHeld(RUN, 'm1');
    // m2 is being delivered when the first delivery, sent again, publishes step 1 once more.
    expect(await claimedIds(messages, NOW + 6)).toEqual(['m2']);
    const again = await messages.publish(
      [{ message: stepMessage('m2b', { stepId: 1, out: '"second"' }), changes: [succeeded(1, 'second')] }],
      { during: during(1), returning: false, now: NOW + 7 },
    );
    expect(again.results).toEqual([{ id: 'm2', deduplicated: true }]);
    expect(await statuses(messages)).toEqual([
      ['m1', 'delivered'],
      ['m2', 'pending'],
    ]);
    expect(decodeValue((await store.listSteps(RUN))[0]!.output!)).toBe('first');
    expect(await messages.settle('m2', 'runner-b', { status: 'delivered' }, NOW + 8)).toBe(true);
  });

  it("holds a wait's end behind the run's delivery in progress without settling it; released after that delivery's settle too", async () => {
    const { messages } = await runInDelivery(open);
    // m1's answer was read and released (nothing held yet); the wait's end lands before m1 is settled.
    expect(await messages.releaseHeld(RUN, 'm1')).toBe(0);
    await messages.publish([{ message: stepMessage('w1', { stepId: 1 }), changes: [] }], {
      behind: [RUN],
      returning: false,
      now: NOW + 5,
    });
    expect(await statuses(messages)).toEqual([
      ['m1', 'pending'],
      ['w1', 'pending'],
    ]);
    expect(await messages.claimDue({ now: NOW + 10, limit: 10, owner: 'runner-b', leaseMs: 60_000 })).toEqual([]);
    // The holder settles m1, then lets go once more: the wait's end goes.
    expect(await messages.settle('m1', 'runner-a', { status: 'delivered' }, NOW + 20)).toBe(true);
    expect(await messages.releaseHeld(RUN, 'm1')).toBe(1);
    expect(await claimedIds(messages, NOW + 30)).toEqual(['w1']);
    // No delivery of the run in progress now: the next wait's end is not held.
    expect(await messages.settle('w1', 'runner-b', { status: 'delivered' }, NOW + 40)).toBe(true);
    await messages.publish([{ message: { ...stepMessage('w2', { stepId: 2 }), now: NOW + 50 }, changes: [] }], {
      behind: [RUN],
      returning: false,
      now: NOW + 50,
    });
    expect(await claimedIds(messages, NOW + 60)).toEqual(['w2']);
  });

  it("stores a resumed run's kept entry delivered: never claimed, still an entry of the run's list", async () => {
    const { messages } = await runInDelivery(open);
    await messages.publish(
      [
        { message: { ...stepMessage('k1', { stepId: 1 }), delivered: true }, changes: [] },
        { message: stepMessage('k2', { stepId: 2 }), changes: [] },
      ],
      { returning: false, now: NOW + 5 },
    );
    expect(await statuses(messages)).toEqual([
      ['m1', 'pending'],
      ['k1', 'delivered'],
      ['k2', 'pending'],
    ]);
    expect(await claimedIds(messages, NOW + 10)).toEqual(['k2']);
  });

  it('holds what a delivery published while its holder renews, until released; a holder that died lets it go with its lease', async () => {
    const { messages } = await runInDelivery(open);
    await messages.publish([{ message: stepMessage('m2', { stepId: 1 }), changes: [] }], {
      during: during(1),
      returning: false,
      now: NOW + 5,
    });
    // runner-a is still reading m1's answer: it renews m1, and with it the hold on m2.
    await messages.renew(['m1'], 'runner-a', NOW + 120_000);
    expect(await messages.claimDue({ now: NOW + 90_000, limit: 10, owner: 'runner-b', leaseMs: 60_000 })).toEqual([]);
    // runner-a dies: nobody renews nor releases; the hold ends when the renewed lease would have.
    expect(
      await messages.claimDue({ now: NOW + 120_001, limit: 10, owner: 'runner-b', leaseMs: 60_000 }),
    ).toMatchObject([{ id: 'm2' }]);
    // A delivery nobody holds (its lease given back, as after a restart) holds nothing of what was published during it.
    expect(await messages.settle('m2', 'runner-b', { status: 'pending', dueAt: NOW + 200_000 }, NOW + 120_002)).toBe(
      true,
    );
    const unheld = await messages.publish([{ message: stepMessage('m3', { stepId: 2 }), changes: [] }], {
      during: during(2),
      returning: false,
      now: NOW + 120_003,
    });
    expect(unheld.held).toBe(0);
    expect(await statuses(messages)).toEqual([
      ['m1', 'delivered'],
      ['m2', 'delivered'],
      ['m3', 'pending'],
    ]);
    expect(await claimedIds(messages, NOW + 120_004)).toEqual(['m3']);
  });

  it("settles a parallel branch's own plan step delivery, and the step after the group the latest delivery", async () => {
    const { messages } = await runInDelivery(open);
    const plans = [
      stepMessage('p2', { stepId: 0, targetStep: 2, concurrent: 2 }),
      stepMessage('p3', { stepId: 0, targetStep: 3, concurrent: 2 }),
    ];
    await messages.publish(
      plans.map((message) => ({ message, changes: [] })),
      { during: during(0, 2), returning: false, now: NOW + 1 },
    );
    expect(await statuses(messages)).toEqual([
      ['m1', 'delivered'],
      ['p2', 'pending'],
      ['p3', 'pending'],
    ]);
    await messages.claimDue({ now: NOW + 2, limit: 10, owner: 'runner-a', leaseMs: 60_000 });
    await messages.publish([{ message: stepMessage('r3', { stepId: 3, concurrent: 2 }), changes: [] }], {
      during: during(3, 2),
      returning: false,
      now: NOW + 3,
    });
    await messages.publish([{ message: stepMessage('r2', { stepId: 2, concurrent: 2 }), changes: [] }], {
      during: during(2, 2),
      returning: false,
      now: NOW + 4,
    });
    expect(await statuses(messages)).toEqual([
      ['m1', 'delivered'],
      ['p2', 'delivered'],
      ['p3', 'delivered'],
      ['r3', 'pending'],
      ['r2', 'pending'],
    ]);
    await messages.claimDue({ now: NOW + 5, limit: 10, owner: 'runner-a', leaseMs: 60_000 });
    // r2's delivery sees both results and runs step 4; r3's, in flight too, publishes nothing.
    await messages.publish([{ message: stepMessage('m4', { stepId: 4 }), changes: [] }], {
      during: during(4),
      returning: false,
      now: NOW + 6,
    });
    expect(await statuses(messages)).toEqual([
      ['m1', 'delivered'],
      ['p2', 'delivered'],
      ['p3', 'delivered'],
      ['r3', 'pending'],
      ['r2', 'delivered'],
      ['m4', 'pending'],
    ]);
  });
});

describe('the delivery a publish was made during', () => {
  const inFlight = (
    id: string,
    seq: number,
    body: object | string,
    callType = 'step',
    headers: Record<string, string> = {},
  ): InFlightMessage => ({ id, seq, callType, body: typeof body === 'string' ? body : JSON.stringify(body), headers });

  it("is a branch's plan step or its call's callback inside Promise.all, else the latest other delivery", () => {
    const messages = [
      inFlight('payload', 1, '{"order":1}'),
      inFlight('plan2', 2, { stepId: 0, stepName: 'a', stepType: 'Run', concurrent: 2, targetStep: 2 }),
      inFlight('callback3', 4, '{"status":200}', 'fromCallback', {
        'upstash-workflow-stepid': '3',
        'upstash-workflow-concurrent': '2',
      }),
      inFlight('result1', 3, { stepId: 1, stepName: 'one', stepType: 'Run', concurrent: 1 }),
    ];
    expect(deliveryInProgress(messages, { stepId: 2, concurrent: 2 })).toBe('plan2');
    expect(deliveryInProgress(messages, { stepId: 3, concurrent: 2 })).toBe('callback3');
    expect(deliveryInProgress(messages, { stepId: 4, concurrent: 2 })).toBeUndefined();
    expect(deliveryInProgress(messages, { stepId: 2, concurrent: 1 })).toBe('result1');
    expect(deliveryInProgress(messages, { stepId: 0, concurrent: 3 })).toBe('result1');
    expect(deliveryInProgress([], { stepId: 2, concurrent: 1 })).toBeUndefined();
  });
});
