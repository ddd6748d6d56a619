import type { StoreConnection } from '../store/types.js';
import type { MessageStore } from './messages/store.js';
import { PostgresMessageStore } from './messages/postgres.js';
import { SqliteMessageStore } from './messages/sqlite.js';
import type { QstashWaitStore } from './waits/waits.js';
import { PostgresQstashWaits } from './waits/postgres.js';
import { SqliteQstashWaits } from './waits/sqlite.js';

/**
 * The QStash engine's tables (`qstash_runs`, `qstash_messages`, `qstash_waits`,
 * `qstash_kept_events`) behind their own interfaces, in the database of the runner's store but not
 * a part of the `Store`: the runner builds them beside the store from its `connection` and hands
 * them to the engine. Their schema is migrated with the store's (one numbered list per database).
 */
export interface QstashStores {
  messages: MessageStore;
  waits: QstashWaitStore;
}

/**
 * The QStash stores on `connection` (a store's SQLite file or PostgreSQL schema); undefined for a
 * store without one (a test's fake), which then has no QStash API.
 *
 * @example
 * const qstash = openQstashStores(store.connection);
 */
export function openQstashStores(connection: StoreConnection | undefined): QstashStores | undefined {
  if (connection === undefined) return undefined;
  if (connection.kind === 'sqlite')
    return { messages: new SqliteMessageStore(connection), waits: new SqliteQstashWaits(connection.db) };
  return { messages: new PostgresMessageStore(connection), waits: new PostgresQstashWaits(connection.sql) };
}
