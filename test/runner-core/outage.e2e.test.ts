import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Workflow } from '../../serve/core/handler.js';
import type { FailureFunctionArgs } from '../../serve/core/options.js';
import {
  closeStarted,
  startApp,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  waitForRun,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/**
 * The app goes down and comes back on the same port (a real server closed and bound again): an
 * outage is not a step failure, and a failed run's failureFunction call waits for the app too.
 */

let runner: TestRunner | undefined;
let app: TestApp | undefined;

afterEach(closeStarted);

function portOf(url: string): number {
  return Number(new URL(url).port);
}

describe('an app outage', () => {
  it('a 10-second outage with 24 runs in flight: every run completes, no step retry is spent', async () => {
    runner = await startTestRunner();
    const workflow: Workflow<unknown, number> = async (context) => {
      const a = await context.run('a', () => 1);
      // Long enough that every run is still asleep when the app goes down, even on a busy machine.
      await context.sleep('nap', '3s');
      const b = await context.run('b', () => a + 1);
      return context.run('c', () => b + 1);
    };
    const serveOptions = { token: runner.token, runnerUrl: runner.url };
    app = await startApp(workflow, serveOptions);
    const port = portOf(app.url);
    const ids = await Promise.all(Array.from({ length: 24 }, () => startThroughApp(app!.url)));
    // Every run has started and is asleep (or about to be): in flight when the app goes down.
    for (const id of ids) await waitForRun(runner.runner, id, (r) => r.stepsDone >= 1);
    await app.close();
    for (const id of ids)
      expect((await runner.store.getRun(id))!.finishedAt, 'every run is in flight when the app goes down').toBeNull();
    const downAt = Date.now();
    // The runs wake up to an app that refuses connections: they wait, marked unreachable.
    await vi.waitFor(
      async () => {
        const runs = await Promise.all(ids.map((id) => runner!.store.getRun(id)));
        const waiting = runs.filter((r) => r!.unreachableSince === null);
        const last = waiting[0] && (await runner!.store.listAttempts(waiting[0].id)).at(-1);
        expect(
          waiting.length,
          `runs not marked unreachable, e.g. ${JSON.stringify(waiting[0])}, last attempt ${JSON.stringify(last?.error)}`,
        ).toBe(0);
      },
      { timeout: 9_500, interval: 50 },
    );
    // The rest of the ten seconds: still nothing failed, no retry spent.
    await vi.waitFor(() => expect(Date.now() - downAt).toBeGreaterThanOrEqual(10_000), {
      timeout: 12_000,
      interval: 100,
    });
    for (const id of ids)
      expect(await runner.store.getRun(id)).toMatchObject({ status: 'running', failures: 0, finishedAt: null });
    app = await startApp(workflow, { ...serveOptions, port });

    for (const id of ids) {
      const { run, steps, attempts } = await waitForFinish(runner.runner, id, 45_000);
      expect(run).toMatchObject({ status: 'completed', failures: 0, unreachableSince: null });
      expect(steps.map((s) => [s.name, s.status, s.failures])).toEqual([
        ['a', 'succeeded', 0],
        ['nap', 'succeeded', 0],
        ['b', 'succeeded', 0],
        ['c', 'succeeded', 0],
      ]);
      expect(attempts.some((a) => a.outcome === 'error' && a.responseStatus === null)).toBe(true);
    }
  }, 90_000);

  it('past the unreachable horizon the run fails, and its failureFunction is delivered once the app is back', async () => {
    runner = await startTestRunner({ runner: { unreachable: { baseMs: 50, capMs: 200, horizonMs: 1_000 } } });
    const calls: { message: string }[] = [];
    const failureFunction = async ({ error }: FailureFunctionArgs): Promise<void> => {
      calls.push({ message: error.message });
    };
    const workflow: Workflow<unknown, number> = async (context) => {
      await context.run('a', () => 1);
      await context.sleep('nap', '200ms');
      return context.run('b', () => 2);
    };
    const serveOptions = { token: runner.token, runnerUrl: runner.url, failureFunction };
    app = await startApp(workflow, serveOptions);
    const port = portOf(app.url);
    const id = await startThroughApp(app.url);
    await waitForRun(runner.runner, id, (r) => r.stepsDone >= 1);
    await app.close();

    // The outage outlasts the horizon: failed, its failureFunction call owed and waiting for the app.
    const failed = await waitForRun(runner.runner, id, (r) => r.status === 'failed' && r.failureCallAttempts >= 2);
    expect(failed).toMatchObject({ failureCall: 'pending', error: { code: 'APP_UNREACHABLE' } });
    expect(failed.error!.message).toMatch(/was unreachable since \d{4}-\d\d-\d\dT/);
    expect(calls).toEqual([]);

    app = await startApp(workflow, { ...serveOptions, port });
    const { run, attempts } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'failed', failureCall: 'delivered' });
    expect(calls).toEqual([{ message: failed.error!.message }]);
    const deliveries = attempts.filter((a) => a.outcome.startsWith('failure-function'));
    expect(deliveries.length).toBe(run.failureCallAttempts);
    expect(deliveries.at(-1)!.outcome).toBe('failure-function done');
    expect(deliveries.slice(0, -1).every((a) => a.outcome === 'failure-function error')).toBe(true);
  }, 30_000);

  it('a failureFunction call still owed when the runner stops is delivered by the next runner on the same file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-outage-'));
    const dbPath = join(dir, 'runner.db');
    try {
      const unreachable = { baseMs: 50, capMs: 200, horizonMs: 500 };
      const first = await startTestRunner({ dbPath, runner: { unreachable } });
      runner = first;
      const calls: string[] = [];
      const failureFunction = async ({ error }: FailureFunctionArgs): Promise<void> => {
        calls.push(error.message);
      };
      const workflow: Workflow<unknown, number> = async (context) => {
        await context.run('a', () => 1);
        await context.sleep('nap', '200ms');
        return context.run('b', () => 2);
      };
      app = await startApp(workflow, { token: first.token, runnerUrl: first.url, failureFunction });
      const port = portOf(app.url);
      const id = await startThroughApp(app.url);
      await waitForRun(first.runner, id, (r) => r.stepsDone >= 1);
      await app.close();
      // Failed while the app was down; the call it owes is committed, not yet delivered, when the runner goes.
      await waitForRun(
        first.runner,
        id,
        (r) => r.status === 'failed' && r.failureCall === 'pending' && r.failureCallAttempts >= 1,
      );
      await first.close();
      expect(calls).toEqual([]);

      runner = await startTestRunner({ dbPath, runner: { unreachable } });
      app = await startApp(workflow, { token: runner.token, runnerUrl: runner.url, failureFunction, port });
      const { run } = await waitForFinish(runner.runner, id);
      expect(run).toMatchObject({ status: 'failed', failureCall: 'delivered', error: { code: 'APP_UNREACHABLE' } });
      expect(calls).toEqual([run.error!.message]);
    } finally {
      await runner?.close();
      runner = undefined;
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
