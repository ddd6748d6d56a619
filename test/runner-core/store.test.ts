import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../runner-core/store/migrations/sqlite.js';
import { openSqliteStore, type SqliteStore } from '../../runner-core/store/sqlite/store.js';
import { describeStore, newRun } from './store-suite.js';

const root = mkdtempSync(join(tmpdir(), 'wfkit-store-'));
let files = 0;
/** A fresh file per call, in a folder that does not exist yet (the store must create it). */
const freshFile = (): string => join(root, `case-${++files}`, 'wf.db');

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describeStore('sqlite :memory:', () => openSqliteStore(':memory:'));
let lastFile = '';
describeStore('sqlite file', () => openSqliteStore((lastFile = freshFile())), {
  peer: () => openSqliteStore(lastFile),
});

describe('sqlite store', () => {
  const open: SqliteStore[] = [];
  const track = (store: SqliteStore): SqliteStore => {
    open.push(store);
    return store;
  };
  let path: string;
  beforeEach(() => {
    path = freshFile();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()));
  });

  it('runs with WAL, synchronous=FULL, a busy timeout and foreign keys', () => {
    const store = track(openSqliteStore(path));
    expect(store.pragma('journal_mode')).toBe('wal');
    expect(store.pragma('synchronous')).toBe(2);
    expect(store.pragma('busy_timeout')).toBe(5000);
    expect(store.pragma('foreign_keys')).toBe(1);
  });

  // Re-running the first migration on reopen would fail with "table runs already exists".
  it('migrates once: user_version counts the migrations and reopening keeps the data', async () => {
    const first = openSqliteStore(path);
    expect(first.pragma('user_version')).toBe(MIGRATIONS.length);
    await first.createRun(newRun(1));
    await first.close();

    const again = track(openSqliteStore(path));
    expect(again.pragma('user_version')).toBe(MIGRATIONS.length);
    expect((await again.getRun(newRun(1).id))?.status).toBe('queued');
  });

  it('refuses a database written by a newer schema', () => {
    path = join(root, `newer-${files}.db`);
    const db = new Database(path);
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    expect(() => openSqliteStore(path)).toThrow(/at most/);
  });

  it('rejects steps and attempts of an unknown run', async () => {
    const store = track(openSqliteStore(':memory:'));
    await expect(
      store.apply([{ type: 'step-started', runId: 'wfr_nope', index: 0, name: 'a', kind: 'run', group: null, at: 1 }]),
    ).rejects.toThrow(/FOREIGN KEY/);
    await expect(
      store.apply([{ type: 'run', runId: 'wfr_nope', patch: { status: 'running' }, at: 1 }]),
    ).rejects.toThrow(/wfr_nope/);
  });
});
