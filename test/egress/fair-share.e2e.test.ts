import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeStarted, startApp, startTestRunner, startThroughApp, waitForFinish } from '../helpers/runner.js';
import type { UpstashApp } from '../qstash/upstash-app.js';
import {
  FAIR_SHARE_OPTIONS,
  slowTargetLeavesOthersGoing,
  startHangingTarget,
  type HangingTarget,
} from './fair-share.js';

/** Finding 2 on SQLite: one dead call target cannot stall other runs, Upstash or native. */

let apps: UpstashApp[] = [];
let target: HangingTarget | undefined;
afterEach(async () => {
  await closeStarted();
  for (const app of apps) await app.close();
  apps = [];
  await target?.close();
  target = undefined;
});

describe('fair share per destination origin (SQLite)', () => {
  it("Upstash calls to a target that never answers hold only its share of the delivery slots; another app's run completes", async () => {
    const runner = await startTestRunner({ runner: FAIR_SHARE_OPTIONS });
    await slowTargetLeavesOthersGoing(runner, apps);
  });

  it("native calls to a target that never answers hold only its share of the drive slots; another app's run completes", async () => {
    target = await startHangingTarget();
    const runner = await startTestRunner({ runner: FAIR_SHARE_OPTIONS });
    const hanging = target;
    const callers = await startApp(
      async (context) =>
        void (await context.call('slow', { url: `${hanging.url}/never`, method: 'GET', timeout: '60s' })),
      {
        token: runner.token,
        runnerUrl: runner.url,
      },
    );
    const other = await startApp(async (context) => context.run('one', async () => 1), {
      token: runner.token,
      runnerUrl: runner.url,
      path: '/other',
    });
    for (let i = 0; i < 6; i++) await startThroughApp(callers.url);
    await vi.waitFor(() => expect(hanging.received()).toBe(2), { timeout: 10_000, interval: 20 });
    const runId = await startThroughApp(other.url);
    const { run } = await waitForFinish(runner.runner, runId, 15_000);
    expect(run.status).toBe('completed');
    expect(hanging.received()).toBe(2);
    // The deferred runs say why they wait (the dashboards read it with the run).
    const reasons = (await runner.store.listRuns({})).runs
      .map((r) => runner.runner.withWaitingReason(r).queuedReason)
      .filter(Boolean);
    expect(reasons.length).toBeGreaterThan(0);
  });

  it('drives to one app origin beyond egress.perAppOrigin are deferred, shown as waiting through the API, and run once a slot frees', async () => {
    const runner = await startTestRunner({ runner: { egress: { perAppOrigin: 1 } } });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const app = await startApp(
      async (context) => {
        const who = (context.requestPayload as { who: string }).who;
        await context.run('step', async () => (who === 'first' ? held.then(() => who) : who));
      },
      { token: runner.token, runnerUrl: runner.url },
    );
    const first = await startThroughApp(app.url, { who: 'first' });
    await vi.waitFor(
      () => expect(runner.runner.egress.counts().apps).toEqual([expect.objectContaining({ inFlight: 1 })]),
      { timeout: 10_000, interval: 20 },
    );
    const second = await startThroughApp(app.url, { who: 'second' });
    const shown = await vi.waitFor(
      async () => {
        const detail = (await (await fetch(`${runner.url}/v1/runs/${second}`)).json()) as {
          run: { queuedReason?: string };
        };
        if (detail.run.queuedReason === undefined) throw new Error('not shown as waiting yet');
        return detail.run.queuedReason;
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(shown).toBe(`for a slot at ${new URL(app.url).origin}: 1 of 1 requests in flight there`);
    release();
    for (const id of [first, second])
      expect((await waitForFinish(runner.runner, id, 15_000)).run.status).toBe('completed');
    // Waiting spent no retry and left no attempt: the second run was driven once.
    expect((await runner.store.listAttempts(second)).length).toBe(1);
  });
});
