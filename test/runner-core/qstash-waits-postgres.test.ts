import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../runner-core/store/postgres/store.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { describeWaitStore } from './qstash-waits-suite.js';

/** The Upstash-protocol waits suite on PostgreSQL: a throw-away cluster, a fresh schema per test, a second handle as a second runner. */
let pg: PostgresCluster | undefined;
const stores: PostgresStore[] = [];
let schemas = 0;
let lastSchema = '';

beforeAll(async () => {
  pg = await startPostgres({ database: 'qstash_waits' });
}, 300_000);

afterAll(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close().catch(() => {})));
  await pg?.stop();
});

async function open(schema: string): Promise<PostgresStore> {
  const store = await openPostgresStore(pg!.url, { leaseClock: 'caller', schema });
  stores.push(store);
  return store;
}

describeWaitStore('postgres', () => open((lastSchema = `waits_${++schemas}`)), { peer: () => open(lastSchema) });
