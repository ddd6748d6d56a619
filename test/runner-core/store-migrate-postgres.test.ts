import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_MIGRATIONS } from '../../runner-core/store/migrations/postgres.js';
import { openPostgresStore, type PostgresStore } from '../../runner-core/store/postgres/store.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { newRun, runId, started, succeeded } from './store-fixtures.js';
import { expectCurrentStoreWorks } from './store-upgrade.js';

/**
 * Upgrades of a PostgreSQL schema: its stored functions are no migrations but are re-created at
 * every start (../../runner-core/store/postgres/functions.ts), so a schema at any older version, holding whatever
 * functions that version shipped, must come out at the current version with today's functions.
 */

let pg: PostgresCluster | undefined;
const stores: PostgresStore[] = [];

beforeAll(async () => {
  pg = await startPostgres({ database: 'store_migrate' });
}, 300_000);

afterAll(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close().catch(() => {})));
  await pg?.stop();
});

/** A schema as a wfkit that had applied the first `version` migrations left it; its functions stale. */
async function schemaAt(schema: string, version: number): Promise<void> {
  const sql = postgres(pg!.url, { max: 1, onnotice: () => {}, connection: { search_path: schema } });
  try {
    await sql.begin(async (tx) => {
      await tx`CREATE SCHEMA ${tx(schema)}`;
      await tx`CREATE TABLE wfkit_migrations
        (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`;
      for (const [i, text] of PG_MIGRATIONS.slice(0, version).entries()) {
        await tx.unsafe(text);
        await tx`INSERT INTO wfkit_migrations (version) VALUES (${i + 1})`;
      }
      // The functions an old version shipped, with the signatures they keep: any body will do to
      // show they are replaced (each older wfkit_apply lacks patch lines of later run fields).
      for (const name of ['wfkit_apply(changes', 'wfkit_apply_step_logs(logs']) {
        const stale = `BEGIN RAISE EXCEPTION 'stale'; END`;
        await tx.unsafe(`CREATE FUNCTION ${name} JSONB, fence_owner TEXT) RETURNS VOID
          LANGUAGE plpgsql AS $$ ${stale} $$`);
      }
    });
  } finally {
    await sql.end();
  }
}

describe('PostgreSQL upgrades', () => {
  it('brings a schema at every older version to the current one, with the current functions', async () => {
    for (let version = 1; version < PG_MIGRATIONS.length; version++) {
      const schema = `from_${version}`;
      await schemaAt(schema, version);
      const store = await openPostgresStore(pg!.url, { schema, leaseClock: 'caller' });
      stores.push(store);
      const query = 'SELECT version FROM wfkit_migrations ORDER BY version';
      const versions = await store.query<{ version: number }[]>(query);
      const all = PG_MIGRATIONS.map((_, i) => i + 1);
      expect(
        versions.map((row) => row.version),
        `from version ${version}`,
      ).toEqual(all);
      await expectCurrentStoreWorks(store);
    }
  });

  it('re-creates the functions at every start, also on a schema that is current', async () => {
    const schema = 'current_stale';
    await schemaAt(schema, PG_MIGRATIONS.length);
    const store = await openPostgresStore(pg!.url, { schema, leaseClock: 'caller' });
    stores.push(store);
    await expectCurrentStoreWorks(store);
  });

  it('lets a runner commit while others start and re-create the functions', async () => {
    const schema = 'live_restarts';
    const live = await openPostgresStore(pg!.url, { schema, leaseClock: 'caller' });
    stores.push(live);
    let starting = true;
    const failures: unknown[] = [];
    let commits = 0;
    const committing = (async () => {
      // At least one commit, and no more than 10,000 whatever happens.
      for (let n = 1; n <= 10_000 && (starting || n === 1); n++) {
        const id = runId(n);
        await live.createRun(newRun(n));
        const end = { type: 'run', runId: id, patch: { status: 'completed', finishedAt: 3 }, at: 3 } as const;
        const changes = [started(id, 0, 1), succeeded(id, 0, '"x"', 2), end];
        await live.apply(changes).then(
          () => commits++,
          (error) => failures.push(error),
        );
      }
    })();
    for (let i = 0; i < 10; i++) await (await openPostgresStore(pg!.url, { schema, leaseClock: 'caller' })).close();
    starting = false;
    await committing;
    expect(failures).toEqual([]);
    expect(commits).toBeGreaterThan(0);
  });
});
