import { afterEach, expect, it } from 'vitest';
import { RunListCache } from '../../runner-core/qstash/delivery/list-cache.js';
import type { MessageStore, NewMessage, StoredMessage } from '../../runner-core/qstash/messages/store.js';
import { openQstashStores } from '../../runner-core/qstash/stores.js';
import { openSqliteStore, type SqliteStore } from '../../runner-core/store/sqlite/store.js';
import { NOW, testMessage } from './message-fixtures.js';

/**
 * The delivery worker's run lists: a delivery reads only the messages published since the run's
 * last delivery here, gets the same list as a whole read, and its own message's status fresh.
 */

let store: SqliteStore | undefined;

afterEach(async () => {
  await store?.close();
});

/** A message of run `runId` whose body is `body`. */
function message(id: string, runId: string, body = id): NewMessage {
  const made = testMessage(id, { runId, callType: 'step', kind: 'workflow' });
  return { ...made, spec: { ...made.spec, body } };
}

/** Starts run `runId` with its first message `first`. */
async function start(messages: MessageStore, runId: string, first: NewMessage): Promise<void> {
  const run = { id: runId, url: 'http://127.0.0.1:9/wf', body: '{}', headers: {}, retries: 0, retryDelayMs: 0 };
  await messages.createRun({ ...run, idempotencyKey: null, config: '{}', now: NOW }, first);
}

function open(): MessageStore {
  store = openSqliteStore(':memory:');
  return openQstashStores(store.connection)!.messages;
}

/** Reads through `cache`, recording which part of the list each read asked the store for. */
function reader(messages: MessageStore, cache: RunListCache, reads: [number, number][]) {
  return async (runId: string, upTo: number) =>
    cache.read(runId, upTo, (after, to) => {
      reads.push([after, to]);
      return messages.runMessages(runId, to, after);
    });
}

it('reads only what was published since the last read, the same list as a whole read', async () => {
  const messages = open();
  const cache = new RunListCache(1_000_000);
  const reads: [number, number][] = [];
  const read = reader(messages, cache, reads);
  await start(messages, 'wfr_a', message('m1', 'wfr_a'));
  await start(messages, 'wfr_b', message('x1', 'wfr_b'));
  await messages.insertMessages([message('m2', 'wfr_a')]);
  const [m1, m2] = (await messages.storedMessages('wfr_a')) as [StoredMessage, StoredMessage];
  expect((await read('wfr_a', m2.seq)).map((m) => m.id)).toEqual(['m1', 'm2']);
  await messages.insertMessages([message('m3', 'wfr_a')]);
  const m3 = (await messages.storedMessages('wfr_a'))[2]!;
  const list = await read('wfr_a', m3.seq);
  expect(list).toEqual(await messages.runMessages('wfr_a', m3.seq));
  expect(reads).toEqual([
    [0, m2.seq],
    [m2.seq, m3.seq],
  ]);
  // A message at or before the cached part (delivered again): the whole list, its status fresh.
  await messages.claimDue({ now: NOW, limit: 10, owner: 'a', leaseMs: 1_000 });
  await messages.settle('m1', 'a', { status: 'delivered' }, NOW);
  expect((await read('wfr_a', m1.seq)).map((m) => [m.id, m.status])).toEqual([['m1', 'delivered']]);
  expect(reads.at(-1)).toEqual([0, m1.seq]);
});

it('keeps at most its bytes, the least recently read run going first; a dropped run is read whole', async () => {
  const messages = open();
  const cache = new RunListCache(2 * (128 + 100));
  const reads: [number, number][] = [];
  const read = reader(messages, cache, reads);
  for (const run of ['a', 'b', 'c'])
    await start(messages, `wfr_${run}`, message(`m_${run}`, `wfr_${run}`, 'x'.repeat(100)));
  const seq = async (run: string) => (await messages.storedMessages(`wfr_${run}`))[0]!.seq;
  for (const run of ['a', 'b', 'c']) await read(`wfr_${run}`, (await seq(run)) + 1_000);
  reads.length = 0;
  // wfr_a went when wfr_c came; wfr_b and wfr_c are kept.
  for (const run of ['c', 'b', 'a']) await read(`wfr_${run}`, (await seq(run)) + 2_000);
  expect(reads.map(([after]) => after > 0)).toEqual([true, true, false]);
  cache.drop('wfr_a');
  reads.length = 0;
  await read('wfr_a', (await seq('a')) + 3_000);
  expect(reads[0]![0]).toBe(0);
});
