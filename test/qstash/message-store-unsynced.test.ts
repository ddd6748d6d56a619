import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { SqliteMessageStore } from '../../runner-core/qstash/messages/sqlite.js';
import { openSqliteStore, type SqliteStore } from '../../runner-core/store/sqlite/store.js';

/**
 * The SQLite message store commits lease and hold writes, settles and a delivery's log without an
 * fsync (`synchronous = NORMAL` for that commit only): the connection is back at FULL after each,
 * and after one that failed, so a publish on the same connection is still synced.
 */

const NOW = 1_800_000_000_000;
const FULL = 2;
let dir: string | undefined;
let store: SqliteStore | undefined;

afterEach(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function open() {
  dir = mkdtempSync(join(tmpdir(), 'wfkit-unsynced-'));
  store = openSqliteStore(join(dir, 'runner.db'));
  const connection = store.connection;
  if (connection?.kind !== 'sqlite') throw new Error('expected a SQLite connection');
  return { store, messages: new SqliteMessageStore(connection) };
}

it('leaves the connection synced (FULL) after every unsynced write, a failed one too', async () => {
  const { store, messages } = open();
  expect(store.pragma('synchronous')).toBe(FULL);
  await messages.claimDue({ now: NOW, limit: 5, owner: 'a', leaseMs: 1_000 });
  expect(store.pragma('synchronous')).toBe(FULL);
  await messages.renew(['msg_x'], 'a', NOW + 1_000);
  await messages.releaseHeld('wfr_x', 'msg_x');
  await messages.nextAttemptSeq('wfr_x', NOW);
  expect(store.pragma('synchronous')).toBe(FULL);
  const take = { owner: 'a', until: NOW + 1_000, now: NOW, limit: 5, maxBytes: 1_000, atLeastOne: true };
  await messages.takeHeld('wfr_x', 'msg_x', take);
  await messages.settle('msg_x', 'a', { status: 'delivered' }, NOW);
  await messages.cancelPending('wfr_x', NOW);
  await messages.logDelivery([], false);
  expect(store.pragma('synchronous')).toBe(FULL);
  await expect(
    messages.logDelivery([{ type: 'run', runId: 'wfr_nobody', patch: { failures: 1 }, at: NOW }], false),
  ).rejects.toThrow();
  expect(store.pragma('synchronous')).toBe(FULL);
  messages.database.exec('DROP TABLE qstash_messages');
  await expect(messages.claimDue({ now: NOW, limit: 5, owner: 'a', leaseMs: 1_000 })).rejects.toThrow();
  expect(store.pragma('synchronous')).toBe(FULL);
});
