import { afterAll, beforeAll } from 'vitest';
import { createApiServer } from '../../runner-core/api/server.js';
import { Runner, type RunnerOptions } from '../../runner-core/runner.js';
import { openPostgresStore, type PostgresStore } from '../../runner-core/store/postgres/store.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { closeServer, listen } from '../helpers/runner.js';

/** One in-process runner with its API on 127.0.0.1. */
export interface ApiRunner {
  runner: Runner;
  url: string;
  close(): Promise<void>;
}

export interface PostgresApiRunnersOptions {
  /** Name of the database made on the throw-away cluster. */
  database: string;
  token: string;
  /** @default 2 */
  count?: number;
  /** @default 3_000 */
  leaseMs?: number;
  /** @default 100 */
  pollMs?: number;
  /** More runner options, the same for every runner; read in `beforeAll`, so they may name what an earlier `beforeAll` started. */
  runner?: () => Omit<RunnerOptions, 'store' | 'tokens' | 'leaseMs' | 'pollMs'>;
}

/**
 * A suite with several runners sharing one throw-away PostgreSQL database, in this process: each
 * with its own store handle (as separate runner processes would have) and its own API server.
 * `runners` and `stores` fill in `beforeAll`; after the suite the runners stop, then the stores
 * close, then the cluster. A file's own `afterAll` registered after this call runs before it
 * (vitest runs after-hooks as a stack), so apps the tests started close while the runners still serve.
 */
export function postgresApiRunners(options: PostgresApiRunnersOptions): {
  runners: ApiRunner[];
  stores: PostgresStore[];
} {
  const { database, token, count = 2, leaseMs = 3_000, pollMs = 100 } = options;
  let pg: PostgresCluster | undefined;
  const stores: PostgresStore[] = [];
  const runners: ApiRunner[] = [];

  beforeAll(async () => {
    pg = await startPostgres({ database });
    for (let i = 0; i < count; i++) {
      const store = await openPostgresStore(pg.url);
      stores.push(store);
      const runner = new Runner({ store, tokens: [token], leaseMs, pollMs, ...options.runner?.() });
      const server = createApiServer(runner, { host: '127.0.0.1' });
      const port = await listen(server);
      await runner.start();
      runners.push({
        runner,
        url: `http://127.0.0.1:${port}`,
        close: async () => (await closeServer(server), await runner.stop(0)),
      });
    }
  }, 300_000);

  afterAll(async () => {
    for (const r of runners) await r.close();
    for (const store of stores) await store.close();
    await pg?.stop();
  });

  return { runners, stores };
}
