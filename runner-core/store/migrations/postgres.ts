import type { Sql } from 'postgres';
import { PG_FUNCTIONS } from '../postgres/functions.js';
import { POSTGRES } from './dialect.js';
import { TABLE_CHANGES } from './list.js';

const [initial, workflowApi, ...later] = TABLE_CHANGES.map((migration) => migration(POSTGRES));

/**
 * The PostgreSQL store's migrations: the table changes of list.ts, with the first two as one
 * version (as they shipped: PostgreSQL came after the workflow API). `wfkit_migrations` holds one
 * row per applied version. Times are epoch milliseconds in BIGINT; JSON stays TEXT, as written;
 * statuses are TEXT without CHECK constraints, for the same reason as in SQLite.
 */
export const PG_MIGRATIONS: readonly string[] = [`${initial}${workflowApi}`, ...later];

/**
 * Brings the schema up to date in one transaction, under a transaction-scoped advisory lock keyed
 * by the schema's name: when many runners start at the same moment, one migrates and the others
 * wait on the lock, then find nothing left to do. (`CREATE … IF NOT EXISTS` alone is not enough:
 * two of them racing can still fail on a catalog unique index.) DDL is transactional in
 * PostgreSQL, so a failed migration leaves nothing half-applied.
 *
 * Then, in the same transaction and under the same lock, the stored functions are re-created as
 * ../postgres/functions.ts defines them (CREATE OR REPLACE), whatever version the schema came from:
 * they are no migration entries, so a function is defined in one place (four definitions: cheap
 * at every start). A runner of an older wfkit starting later would put its own back: a change to a
 * function that must not be undone so comes with a migration entry, which older runners refuse.
 *
 * `sql` must have `search_path` set to `schema` (the store's connections do).
 *
 * @example
 * await migratePostgres(sql, 'wfkit');
 */
export async function migratePostgres(sql: Sql<any>, schema: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${`wfkit.migrate.${schema}`}))`;
    await tx`CREATE SCHEMA IF NOT EXISTS ${tx(schema)}`;
    await tx`CREATE TABLE IF NOT EXISTS wfkit_migrations (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`;
    const [row] = await tx<
      { version: number }[]
    >`SELECT COALESCE(MAX(version), 0)::int AS version FROM wfkit_migrations`;
    const current = row?.version ?? 0;
    if (current > PG_MIGRATIONS.length) {
      throw new Error(
        `Expected the PostgreSQL schema "${schema}" to be at version ${PG_MIGRATIONS.length} at most, got ${current}: it was written by a newer wfkit.`,
      );
    }
    for (let index = current; index < PG_MIGRATIONS.length; index++) {
      await tx.unsafe(PG_MIGRATIONS[index] ?? '');
      await tx`INSERT INTO wfkit_migrations (version) VALUES (${index + 1})`;
    }
    await tx.unsafe(PG_FUNCTIONS);
  });
}
