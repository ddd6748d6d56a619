import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, parseDatabaseUrl, redactDatabaseUrl, SqliteStore } from '../../runner-core/store/index.js';

describe('openStore / parseDatabaseUrl', () => {
  it('tells PostgreSQL URLs from SQLite paths, and takes the schema out of the URL', () => {
    expect(parseDatabaseUrl('postgres://wf:pw@db:5432/wf')).toEqual({
      kind: 'postgres',
      url: 'postgres://wf:pw@db:5432/wf',
    });
    expect(parseDatabaseUrl('postgresql://db/wf?schema=jobs&sslmode=require')).toEqual({
      kind: 'postgres',
      url: 'postgresql://db/wf?sslmode=require',
      schema: 'jobs',
    });
    expect(parseDatabaseUrl('.wf/runner.db')).toEqual({ kind: 'sqlite', path: '.wf/runner.db' });
    expect(parseDatabaseUrl('sqlite:/var/lib/wf.db')).toEqual({ kind: 'sqlite', path: '/var/lib/wf.db' });
    expect(parseDatabaseUrl(':memory:')).toEqual({ kind: 'sqlite', path: ':memory:' });
    expect(() => parseDatabaseUrl('mysql://u:secret@db/wf')).toThrow(
      'Expected a PostgreSQL URL (postgres://…) or a SQLite file path, got "mysql://u:***@db/wf".',
    );
  });

  it('redacts passwords for logs', () => {
    expect(redactDatabaseUrl('postgres://wf:s3cret@db/wf')).toBe('postgres://wf:***@db/wf');
    expect(redactDatabaseUrl('postgres://db/wf')).toBe('postgres://db/wf');
  });

  it('opens SQLite for a path', async () => {
    const store = await openStore(':memory:');
    expect(store).toBeInstanceOf(SqliteStore);
    await store.close();
  });

  it('loads the postgres package only for a PostgreSQL URL (the built package, in a fresh process)', () => {
    const index = resolve(import.meta.dirname, '../../dist/runner-core/index.js');
    if (!existsSync(index)) throw new Error(`${index} is missing: run \`npm run build\` first.`);
    // Module hooks see every import the process resolves.
    const script = `
      import { registerHooks } from 'node:module';
      const seen = new Set();
      registerHooks({ resolve(specifier, context, next) { seen.add(specifier); return next(specifier, context); } });
      const { openStore } = await import(${JSON.stringify(index)});
      const store = await openStore(':memory:');
      await store.close();
      const afterSqlite = seen.has('postgres');
      await openStore('postgres://127.0.0.1:1/none').catch(() => {});
      console.log(JSON.stringify({ afterSqlite, afterPostgres: seen.has('postgres') }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, PGCONNECT_TIMEOUT: '1' },
    });
    expect(JSON.parse(out)).toEqual({ afterSqlite: false, afterPostgres: true });
  });
});
