import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRunner, type CreatedRunner } from '../../runner-core/create-runner.js';
import { DatabaseOpenError, RunnerConfigError } from '../../runner-core/errors.js';
import type { Logger } from '../../runner-core/telemetry/logger.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import { TEST_TOKEN } from '../helpers/runner.js';

const opened: CreatedRunner[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const runner of opened.splice(0)) await runner.close(0);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const record = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, info: record('info'), warn: record('warn'), error: record('error') };
}

describe('createRunner', () => {
  it('opens a SQLite database, serves the API on a free port, and closes the store it opened', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-create-'));
    dirs.push(dir);
    const created = await createRunner({ database: join(dir, 'runner.db'), tokens: [TEST_TOKEN], port: 0 });
    opened.push(created);
    expect(created.storeKind).toBe('sqlite');
    const health = await fetch(`${created.url}/healthz`);
    expect(health.status).toBe(200);
    // Domain errors from the actions come out of the API as statuses.
    const missing = await fetch(`${created.url}/v1/runs/run_missing/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([
      404,
      'NOT_FOUND',
    ]);
  });

  it("takes an open store, which it leaves open, and the injected logger gets the runner's lines", async () => {
    const store = await openSqliteStore(':memory:');
    const logger = recordingLogger();
    const created = await createRunner({ store, tokens: [TEST_TOKEN], port: 0, logger });
    created.runner.events.subscribe(() => {
      throw new Error('listener broke');
    });
    await created.runner.startRun({ url: 'http://127.0.0.1:9/api/wf', body: 'null', headers: {}, delayMs: 60_000 });
    expect(logger.lines).toEqual([expect.stringMatching(/^error: event listener failed: Error: listener broke/)]);
    await created.close(0);
    // Still open: the caller owns it.
    expect(await store.nextDueAt()).not.toBeNull();
    await store.close();
  });

  it('refuses options that do not make a runner, with typed errors', async () => {
    await expect(createRunner({ tokens: [TEST_TOKEN] })).rejects.toThrow(RunnerConfigError);
    await expect(createRunner({ database: 'mysql://db/wf', tokens: [TEST_TOKEN] })).rejects.toThrow(
      /Expected a PostgreSQL URL/,
    );
    await expect(createRunner({ database: ':memory:', tokens: [], port: 0 })).rejects.toThrow(RunnerConfigError);
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-create-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'a-file'), '');
    await expect(
      createRunner({ database: join(dir, 'a-file', 'runner.db'), tokens: [TEST_TOKEN], port: 0 }),
    ).rejects.toThrow(DatabaseOpenError);
  });
});
