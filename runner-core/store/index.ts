import { openSqliteStore } from './sqlite/store.js';
import type { PostgresStoreOptions } from './postgres/store.js';
import type { Store } from './types.js';

export * from './types.js';
export { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './rows.js';
export { LeaseLostError } from './errors.js';
export { openSqliteStore, SqliteStore } from './sqlite/store.js';
// postgres/store.ts loads the `postgres` package only inside openPostgresStore, so this export is free.
export { openPostgresStore, PostgresStore, type PostgresStoreOptions } from './postgres/store.js';

export type DatabaseLocation = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; schema?: string };

/**
 * Where a `--database` value points: `postgres://…` or `postgresql://…` is PostgreSQL (an optional
 * `?schema=name` query parameter names the schema for wfkit's tables, `wfkit` by default); anything
 * else is a SQLite file path (`sqlite:` prefix optional, `:memory:` allowed).
 *
 * @example
 * parseDatabaseUrl('postgres://db/wf?schema=jobs'); // { kind: 'postgres', url: 'postgres://db/wf', schema: 'jobs' }
 */
export function parseDatabaseUrl(value: string): DatabaseLocation {
  if (/^postgres(ql)?:\/\//i.test(value)) {
    const url = new URL(value);
    const schema = url.searchParams.get('schema') ?? undefined;
    // Unknown query parameters go to the server as settings: `schema` is ours, not the server's.
    url.searchParams.delete('schema');
    return { kind: 'postgres', url: url.toString(), ...(schema !== undefined && { schema }) };
  }
  const path = value.replace(/^sqlite:(\/\/)?/i, '');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    throw new Error(
      `Expected a PostgreSQL URL (postgres://…) or a SQLite file path, got "${redactDatabaseUrl(value)}".`,
    );
  }
  if (path === '') throw new Error('Expected a SQLite file path or a postgres:// URL, got an empty string.');
  return { kind: 'sqlite', path };
}

/** The URL with its password replaced by `***`, for logs and error messages. */
export function redactDatabaseUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return value;
  }
}

/**
 * Opens the store a `--database` value points at (see `parseDatabaseUrl`): SQLite (the default,
 * one runner process) or PostgreSQL (several runners sharing the work). The `postgres` package is
 * imported only for a PostgreSQL URL.
 *
 * @example
 * const store = await openStore(process.env.WF_DATABASE_URL ?? '.wf/runner.db');
 */
export async function openStore(value: string, options: { postgres?: PostgresStoreOptions } = {}): Promise<Store> {
  const location = parseDatabaseUrl(value);
  if (location.kind === 'sqlite') return openSqliteStore(location.path);
  const { openPostgresStore } = await import('./postgres/store.js');
  return openPostgresStore(location.url, {
    ...(location.schema !== undefined && { schema: location.schema }),
    ...options.postgres,
  });
}
