import { afterEach, expect, it } from 'vitest';
import { CommitQueue } from '../../runner-core/commit/commit-queue.js';
import { EventBus, type RunnerEvent } from '../../runner-core/commit/events.js';
import { CallCredentials } from '../../runner-core/drive/call-credentials.js';
import type { EngineContext } from '../../runner-core/qstash/context.js';
import { commitDeliveryEnd } from '../../runner-core/qstash/delivery/delivery-log.js';
import { openQstashStores } from '../../runner-core/qstash/stores.js';
import { openSqliteStore, type SqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Change } from '../../runner-core/store/types.js';
import { attempt, newRun, runId, T0 } from '../runner-core/store-fixtures.js';

/**
 * A delivery's end on SQLite: its log alone (the attempt, the run's failures) commits through the
 * message store (unsynced), announced and redacted as the runner's commit would; anything carrying
 * a step result goes through the runner's commit.
 */

let store: SqliteStore | undefined;

afterEach(async () => {
  await store?.close();
});

async function setUp() {
  store = openSqliteStore(':memory:');
  await store.createRun(newRun(1));
  const queue = new CommitQueue(store);
  const committed: Change[][] = [];
  const events = new EventBus();
  const seen: RunnerEvent[] = [];
  events.subscribe((event) => seen.push(event));
  const context = {
    store,
    messages: openQstashStores(store.connection)!.messages,
    events,
    credentials: new CallCredentials(['runner-token']),
    commit: async (changes: Change[]) => {
      committed.push(changes);
      await queue.push(changes);
    },
  } as unknown as EngineContext;
  return { store, context, committed, seen };
}

it("commits a delivery's log beside the runner's commit, redacted and announced", async () => {
  const { store, context, committed, seen } = await setUp();
  const logged = attempt(runId(1), 1, { requestHeaders: { authorization: 'Bearer secret' } });
  await commitDeliveryEnd(context, [
    { type: 'attempt', attempt: logged },
    { type: 'run', runId: runId(1), patch: { failures: 2, unreachableSince: null }, at: T0 + 5 },
  ]);
  expect(committed).toEqual([]);
  const [stored] = await store.listAttempts(runId(1));
  expect(stored).toMatchObject({ seq: 1, requestHeaders: { authorization: '[redacted]' } });
  expect((await store.getRun(runId(1)))?.failures).toBe(2);
  expect(seen.map((event) => event.type)).toEqual(['attempt', 'run']);
});

it("sends a step's result or any other run change through the runner's commit", async () => {
  const { store, context, committed } = await setUp();
  const sleepDone: Change = {
    type: 'step-succeeded',
    runId: runId(1),
    index: 1,
    name: 'sleep',
    kind: 'sleep',
    output: null,
    at: T0 + 5,
    durationMs: 0,
  };
  await commitDeliveryEnd(context, [{ type: 'attempt', attempt: attempt(runId(1), 1) }, sleepDone]);
  await commitDeliveryEnd(context, [
    { type: 'run', runId: runId(1), patch: { failureCall: 'delivered', failureCallAttempts: 1 }, at: T0 + 6 },
  ]);
  expect(committed.map((changes) => changes.map((change) => change.type))).toEqual([
    ['attempt', 'step-succeeded'],
    ['run'],
  ]);
  expect((await store.listSteps(runId(1))).map((step) => [step.index, step.status])).toEqual([[1, 'succeeded']]);
  await commitDeliveryEnd(context, []);
  expect(committed).toHaveLength(2);
});
