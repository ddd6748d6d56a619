import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  Counter,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  waitForRun,
  type TestRunner,
} from '../helpers/runner.js';
import { useWorlds, value } from './world.js';

/** `context.sleep` and `sleepUntil` end the request; the runner wakes the run when due, restarts included. */

const worlds = useWorlds();

describe('context.sleep', () => {
  it('ends the request, parks the run as sleeping until the wake-up, then completes', async () => {
    const calls = new Counter();
    const { runner, app, openDrives } = await worlds.setup(async (context) => {
      const before = await context.run('before', () => (calls.hit('before'), 'B'));
      await context.sleep('nap', 1);
      return context.run('after', () => (calls.hit('after'), `${before}-after`));
    });
    const id = await startThroughApp(app.url);

    const sleeping = await waitForRun(runner.runner, id, (r) => r.status === 'sleeping');
    const [before, nap] = await runner.store.listSteps(id);
    expect(before).toMatchObject({ name: 'before', kind: 'run', status: 'succeeded' });
    expect(nap).toMatchObject({
      index: 1,
      name: 'nap',
      kind: 'sleep',
      status: 'running',
      group: 2,
      until: expect.any(Number),
      eventId: null,
      request: null,
    });
    expect(sleeping.nextAt).toBe(nap!.until);
    // The route set the wake-up 1 s after it reached the sleep, during the first drive request.
    const [first] = await runner.store.listAttempts(id);
    expect(nap!.until! - first!.startedAt).toBeGreaterThanOrEqual(1000);
    expect(nap!.until! - first!.startedAt).toBeLessThanOrEqual(1000 + first!.durationMs);
    // Nothing holds the route while the run sleeps.
    expect(openDrives()).toBe(0);
    expect(calls.of('after')).toBe(0);

    const { run, steps, attempts } = await waitForFinish(runner.runner, id);
    expect(run.status).toBe('completed');
    expect(value(run.output)).toBe('B-after');
    expect(steps.map((s) => [s.name, s.kind, s.status])).toEqual([
      ['before', 'run', 'succeeded'],
      ['nap', 'sleep', 'succeeded'],
      ['after', 'run', 'succeeded'],
    ]);
    expect(steps[1]!.output).toBeNull();
    expect(attempts.map((a) => a.outcome)).toEqual(['suspend', 'done']);
    // The second drive is not sent before the wake-up time.
    expect(attempts[1]!.startedAt).toBeGreaterThanOrEqual(nap!.until!);
    expect(calls.counts).toEqual(
      new Map([
        ['before', 1],
        ['after', 1],
      ]),
    );
  });

  it('reads a duration string', async () => {
    const { runner, app } = await worlds.setup(async (context) => {
      await context.sleep('short', '250ms');
    });
    const id = await startThroughApp(app.url);
    await waitForRun(runner.runner, id, (r) => r.status === 'sleeping');
    const [step] = await runner.store.listSteps(id);
    const [first] = await runner.store.listAttempts(id);
    expect(step!.until! - first!.startedAt).toBeGreaterThanOrEqual(250);
    expect(step!.until! - first!.startedAt).toBeLessThanOrEqual(250 + first!.durationMs);
    expect((await waitForFinish(runner.runner, id)).run.status).toBe('completed');
  });

  it('fails the run on a duration it cannot read, naming the sleep', async () => {
    const { runner, app } = await worlds.setup(async (context) => {
      await context.sleep('bad', 'a while');
    });
    const { run } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(run.status).toBe('failed');
    expect(run.error?.message).toContain('the duration of sleep "bad"');
  });
});

describe('context.sleepUntil', () => {
  it('sleeps until the given date, then completes', async () => {
    const { runner, app } = await worlds.setup(async (context) => {
      // The date comes from the payload, so every replay asks for the same one.
      await context.sleepUntil('until', new Date((context.requestPayload as { at: string }).at));
      return 'woke';
    });
    const at = new Date(Date.now() + 300);
    const id = await startThroughApp(app.url, { at: at.toISOString() });
    const { run, steps, attempts } = await waitForFinish(runner.runner, id);
    expect(value(run.output)).toBe('woke');
    expect(steps).toMatchObject([{ name: 'until', kind: 'sleep', status: 'succeeded', until: at.getTime() }]);
    expect(attempts[1]!.startedAt).toBeGreaterThanOrEqual(at.getTime());
  });

  it('does not park a run whose date has passed', async () => {
    const { runner, app } = await worlds.setup(async (context) => {
      await context.sleepUntil('past', 0);
      return 'at once';
    });
    const { run, steps } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(value(run.output)).toBe('at once');
    expect(steps).toMatchObject([{ kind: 'sleep', status: 'succeeded', until: 0 }]);
  });
});

describe('a sleep across a runner restart', () => {
  it('wakes on a new runner started on the same SQLite file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-sleep-'));
    let second: TestRunner | undefined;
    worlds.defer(async () => {
      await second?.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const dbPath = join(dir, 'runner.db');
    const calls = new Counter();
    const { runner: first, app } = await worlds.setup(
      async (context) => {
        await context.run('before', () => calls.hit('before'));
        await context.sleep('nap', 0.5);
        await context.run('after', () => calls.hit('after'));
      },
      {},
      { dbPath },
    );
    const id = await startThroughApp(app.url);
    await waitForRun(first.runner, id, (r) => r.status === 'sleeping');
    await first.close();

    // The app keeps its old runner URL: it only needs the runner to start runs, the runner calls it.
    second = await startTestRunner({ dbPath, runner: { exclusive: true } });
    const { run, steps, attempts } = await waitForFinish(second.runner, id);
    expect(run.status).toBe('completed');
    expect(steps.map((s) => [s.name, s.status, s.reportedExecutions])).toEqual([
      ['before', 'succeeded', 1],
      ['nap', 'succeeded', 1],
      ['after', 'succeeded', 1],
    ]);
    expect(attempts.map((a) => a.outcome)).toEqual(['suspend', 'done']);
    expect(calls.counts).toEqual(
      new Map([
        ['before', 1],
        ['after', 1],
      ]),
    );
  });
});
