import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../runner-core/store/migrations/sqlite.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import { expectCurrentStoreWorks } from './store-upgrade.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wfkit-migrate-'));
  dirs.push(dir);
  return join(dir, 'old.db');
}

describe('SQLite upgrades', () => {
  it('brings a file at every older version to the current one, where the store works in full', async () => {
    for (let version = 0; version < MIGRATIONS.length; version++) {
      const path = tempPath();
      const old = new Database(path);
      for (const [i, sql] of MIGRATIONS.slice(0, version).entries()) {
        old.exec(sql);
        old.pragma(`user_version = ${i + 1}`);
      }
      old.close();
      const store = openSqliteStore(path);
      expect(store.pragma('user_version'), `from version ${version}`).toBe(MIGRATIONS.length);
      await expectCurrentStoreWorks(store);
      await store.close();
    }
  });
});

describe('SQLite migration 3 on a file written by the previous version', () => {
  it('keeps runs and steps: executions become reportedExecutions, the new run fields start empty, a failed run is not claimable', async () => {
    const path = tempPath();
    const old = new Database(path);
    for (const [i, sql] of MIGRATIONS.slice(0, 2).entries()) {
      old.exec(sql);
      old.pragma(`user_version = ${i + 1}`);
    }
    old.exec(`INSERT INTO runs (id, url, status, body, headers, created_at, updated_at, next_at, retries, retry_delay_ms)
      VALUES ('wfr_1', 'http://127.0.0.1:3000/wf', 'failed', '{}', '{}', 1, 2, 5, 3, 1000);
      INSERT INTO steps (run_id, idx, name, kind, status, started_at, executions) VALUES ('wfr_1', 0, 'a', 'run', 'failed', 1, 4);`);
    old.close();

    const store = openSqliteStore(path);
    expect(store.pragma('user_version')).toBe(MIGRATIONS.length);
    expect(await store.getRun('wfr_1')).toMatchObject({
      status: 'failed',
      unreachableSince: null,
      failureCall: null,
      failureCallAttempts: 0,
    });
    expect((await store.listSteps('wfr_1')).map((s) => s.reportedExecutions)).toEqual([4]);
    expect(await store.claimDue({ now: 10, limit: 10, owner: 'a', leaseMs: 1000 })).toEqual([]);
    await store.close();
  });
});
