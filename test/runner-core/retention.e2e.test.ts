import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '../../api/client.js';
import { Runner } from '../../runner-core/runner.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import { closeStarted, Counter, startApp, startTestRunner } from '../helpers/runner.js';

/**
 * Retention end to end: a real runner with a short retention prunes the runs it finished (and
 * every row under them) in the background, while runs still to do stay; its API tells the
 * database's size, and `POST /v1/prune` needs the token.
 */

afterEach(closeStarted);

describe('retention', () => {
  it('prunes finished runs in the background and keeps the ones still to do', async () => {
    const runner = await startTestRunner({ runner: { retention: 300 } });
    const ran = new Counter();
    const app = await startApp(async (context) => context.run('only', () => ran.hit(context.workflowRunId)), {
      token: runner.token,
      runnerUrl: runner.url,
    });
    const later = (await runner.runner.startRun({ url: app.url, body: '', headers: {}, delayMs: 3_600_000 })).run.id;
    const finished: string[] = [];
    for (let i = 0; i < 5; i++)
      finished.push((await runner.runner.startRun({ url: app.url, body: '', headers: {} })).run.id);
    // Each ran (a finished run may be pruned 300 ms later: its row is no witness).
    await vi.waitFor(() => expect(finished.filter((id) => ran.of(id) === 0)).toEqual([]), {
      timeout: 15_000,
      interval: 50,
    });

    await vi.waitFor(
      async () => {
        for (const id of finished) expect(await runner.store.getRun(id)).toBeUndefined();
      },
      { timeout: 15_000, interval: 100 },
    );
    for (const id of finished) {
      expect(await runner.store.listSteps(id)).toEqual([]);
      expect(await runner.store.listAttempts(id)).toEqual([]);
    }
    expect((await runner.store.getRun(later))?.status).toBe('queued');

    const client = new Client({ runnerUrl: runner.url, token: runner.token });
    const info = await client.storeInfo();
    expect(info.retentionMs).toBe(300);
    expect(info.sizeBytes).toBeGreaterThan(0);
  });

  it('keeps runs forever without a retention, and refuses a bad one naming what it expected', async () => {
    const runner = await startTestRunner();
    expect(runner.runner.retention.retentionMs).toBe(0);
    const store = openSqliteStore(':memory:');
    try {
      expect(() => new Runner({ store, tokens: ['t'], retention: -1 })).toThrow(
        'Expected `retention` to be a whole number of milliseconds (0 keeps runs forever), got -1.',
      );
      expect(() => new Runner({ store, tokens: ['t'], retention: 1.5 })).toThrow(/got 1\.5/);
    } finally {
      await store.close();
    }
  });

  it('answers POST /v1/prune only with the token, and a malformed request with 400 naming the field', async () => {
    const runner = await startTestRunner();
    const anonymous = await fetch(`${runner.url}/v1/prune`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"olderThanMs":0}',
    });
    expect(anonymous.status).toBe(401);
    const post = (body: unknown) =>
      fetch(`${runner.url}/v1/prune`, {
        method: 'POST',
        headers: { authorization: `Bearer ${runner.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    for (const [body, field] of [
      [{}, 'olderThanMs'],
      [{ olderThanMs: -1 }, 'olderThanMs'],
      [{ olderThanMs: 0, dryRun: 'yes' }, 'dryRun'],
      [{ olderThanMs: 0, cursor: 'nope' }, 'cursor'],
      [{ olderThanMs: 0, maxRuns: 0 }, 'maxRuns'],
    ] as const) {
      const response = await post(body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain(`\`${field}\``);
    }
    expect(await (await post({ olderThanMs: 0, dryRun: true })).json()).toEqual({
      runs: 0,
      steps: 0,
      attempts: 0,
      stepLogs: 0,
      messages: 0,
      waits: 0,
      kept: 0,
      cursor: null,
      busy: false,
    });
  });
});
