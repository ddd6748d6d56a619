import { describe, expect, it } from 'vitest';
import { decodeOutcome } from '../../protocol/outcome.js';
import { Counter, gate, startThroughApp, waitForFinish, waitForRun } from '../helpers/runner.js';
import { api, useWorlds, value } from './world.js';

/** Steps started together (`Promise.all`), and ending a run early with `context.cancel()`. */

const worlds = useWorlds();

const lines = (body: string | null): string[] =>
  (body ?? '')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const o = decodeOutcome(line);
      return 'name' in o ? `${o.t}:${o.name}` : o.t;
    });

describe('parallel steps', () => {
  it('runs a and b at the same time beside a sleep, in one group, and replays them without running them again', async () => {
    const aRunning = gate();
    const bRunning = gate();
    worlds.defer(() => (aRunning.open(), bRunning.open()));
    const calls = new Counter();
    const { runner, app } = await worlds.setup(async (context) => {
      const [a, b] = await Promise.all([
        // Each waits until the other has started: they finish only if they overlap.
        context.run('a', async () => {
          calls.hit('a');
          aRunning.open();
          await bRunning.promise;
          return 'A';
        }),
        context.run('b', async () => {
          calls.hit('b');
          bRunning.open();
          await aRunning.promise;
          return 'B';
        }),
        context.sleep('c', 0.2),
      ]);
      return context.run('d', () => (calls.hit('d'), `${a}${b}`));
    });
    const id = await startThroughApp(app.url);
    const { run, steps, attempts } = await waitForFinish(runner.runner, id);

    expect(run.status).toBe('completed');
    expect(value(run.output)).toBe('AB');
    expect(steps.map((s) => [s.index, s.name, s.kind, s.status, s.group])).toEqual([
      [0, 'a', 'run', 'succeeded', 1],
      [1, 'b', 'run', 'succeeded', 1],
      [2, 'c', 'sleep', 'succeeded', 1],
      [3, 'd', 'run', 'succeeded', 2],
    ]);
    // Both started before either finished; the sleep went to the runner once both were done.
    expect(lines(attempts[0]!.responseBody).slice(0, 2)).toEqual(['started:a', 'started:b']);
    expect(lines(attempts[0]!.responseBody).at(-1)).toBe('suspend');
    expect(attempts.map((a) => a.outcome)).toEqual(['suspend', 'done']);
    // The second drive answered a, b and c from their records: the fns ran once.
    const replayed = JSON.parse(attempts[1]!.requestBody) as { steps: { name: string }[] };
    expect(replayed.steps.map((s) => s.name)).toEqual(['a', 'b', 'c']);
    expect(calls.counts).toEqual(
      new Map([
        ['a', 1],
        ['b', 1],
        ['d', 1],
      ]),
    );
  });

  it('keeps the result of a step that finished beside a failing one, and retries only the failing one', async () => {
    const calls = new Counter();
    const { runner, app } = await worlds.setup(async (context) => {
      const results = await Promise.all([
        context.run('steady', () => (calls.hit('steady'), 'S')),
        context.run('flaky', async () => {
          if (calls.hit('flaky') === 1) throw new Error('first try fails');
          return 'F';
        }),
      ]);
      return results.join('');
    });
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(value(run.output)).toBe('SF');
    expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'done']);
    expect(steps.map((s) => [s.name, s.status, s.reportedExecutions, s.group])).toEqual([
      ['steady', 'succeeded', 1, 1],
      ['flaky', 'succeeded', 2, 1],
    ]);
    expect(calls.counts).toEqual(
      new Map([
        ['steady', 1],
        ['flaky', 2],
      ]),
    );
  });
});

describe('parallel steps that finish out of order', () => {
  it('never executes again a step that succeeded beside a failing step at an earlier position', async () => {
    const calls = new Counter();
    const { runner, app } = await worlds.setup(async (context) =>
      Promise.all([
        context.run('flaky', async () => {
          if (calls.hit('flaky') === 1) throw new Error('first try fails');
          return 'F';
        }),
        context.run('steady', () => (calls.hit('steady'), 'S')),
      ]),
    );
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(value(run.output)).toEqual(['F', 'S']);
    expect(calls.counts).toEqual(
      new Map([
        ['flaky', 2],
        ['steady', 1],
      ]),
    );
    expect(steps.map((s) => [s.name, s.status, s.reportedExecutions])).toEqual([
      ['flaky', 'succeeded', 2],
      ['steady', 'succeeded', 1],
    ]);
    // The retry's drive request holds flaky's position open and carries steady's result.
    expect(JSON.parse(attempts[1]!.requestBody).steps).toEqual([
      { index: 0, name: 'flaky', kind: 'run', pending: true },
      expect.objectContaining({ index: 1, name: 'steady', kind: 'run', output: expect.any(String) }),
    ]);
  });

  it('never executes again a step that succeeded beside a sleep and a failing step (the sleep holds its position)', async () => {
    const calls = new Counter();
    const { runner, app } = await worlds.setup(async (context) => {
      const [, flaky, steady] = await Promise.all([
        context.sleep('nap', 0.1),
        context.run('flaky', async () => {
          if (calls.hit('flaky') === 1) throw new Error('first try fails');
          return 'F';
        }),
        context.run('steady', () => (calls.hit('steady'), 'S')),
      ]);
      return `${flaky}${steady}`;
    });
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(run.status).toBe('completed');
    expect(value(run.output)).toBe('FS');
    expect(calls.counts).toEqual(
      new Map([
        ['flaky', 2],
        ['steady', 1],
      ]),
    );
    expect(steps.map((s) => [s.name, s.kind, s.status, s.reportedExecutions])).toEqual([
      ['nap', 'sleep', 'succeeded', 1],
      ['flaky', 'run', 'succeeded', 2],
      ['steady', 'run', 'succeeded', 1],
    ]);
    // The first response ended with flaky's failure, before any `suspend` line: the sleep's row came
    // from its `started` line, and the retry's drive request holds it (and flaky) open.
    expect(lines(attempts[0]!.responseBody)).toContain('started:nap');
    expect(attempts[0]!.outcome).toBe('failed');
    expect(JSON.parse(attempts[1]!.requestBody).steps).toEqual([
      { index: 0, name: 'nap', kind: 'sleep', pending: true },
      { index: 1, name: 'flaky', kind: 'run', pending: true },
      expect.objectContaining({ index: 2, name: 'steady', kind: 'run', output: expect.any(String) }),
    ]);
  });

  it('goes on after a Promise.race whose losing wait is still pending, without executing finished steps again', async () => {
    const calls = new Counter();
    const { runner, app } = await worlds.setup(async (context) => {
      const winner = await Promise.race([
        context.sleep('timer', 0.1).then(() => 'timer'),
        context.waitForEvent('reply', 'never-sent', { timeout: '1h' }).then(() => 'reply'),
      ]);
      await context.run('next', () => calls.hit('next'));
      await context.sleep('pause', 0.1);
      await context.run('last', () => calls.hit('last'));
      return winner;
    });
    const { run, steps } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(run.status).toBe('completed');
    expect(value(run.output)).toBe('timer');
    expect(calls.counts).toEqual(
      new Map([
        ['next', 1],
        ['last', 1],
      ]),
    );
    expect(steps.map((s) => [s.name, s.kind])).toEqual([
      ['timer', 'sleep'],
      ['reply', 'wait'],
      ['next', 'run'],
      ['pause', 'sleep'],
      ['last', 'run'],
    ]);
    // The losing wait was never resolved: the run finished without it.
    expect(steps.filter((s) => s.status === 'succeeded').map((s) => s.name)).toEqual([
      'timer',
      'next',
      'pause',
      'last',
    ]);
  });
});

describe('cancelling', () => {
  it('context.cancel() ends the run as cancelled; nothing after it runs', async () => {
    const calls = new Counter();
    const { runner, app } = await worlds.setup(async (context) => {
      await context.run('check', () => calls.hit('check'));
      if ((context.requestPayload as { stop: boolean }).stop) await context.cancel();
      await context.run('after', () => calls.hit('after'));
    });
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url, { stop: true }));
    expect(run).toMatchObject({ status: 'cancelled', error: null, output: null });
    expect(steps.map((s) => [s.name, s.status])).toEqual([['check', 'succeeded']]);
    expect(attempts.map((a) => a.outcome)).toEqual(['cancel']);
    expect(calls.counts).toEqual(new Map([['check', 1]]));
  });

  it('cancelling a sleeping run through the API closes its sleep as cancelled, and it never wakes', async () => {
    const after = new Counter();
    const { runner, app } = await worlds.setup(async (context) => {
      await context.sleep('long-nap', '1h');
      await context.run('after', () => after.hit('after'));
    });
    const id = await startThroughApp(app.url);
    await waitForRun(runner.runner, id, (r) => r.status === 'sleeping');
    const { status, body } = await api(runner, 'POST', `/v1/runs/${id}/cancel`);
    expect(status).toBe(200);
    expect(body.run).toMatchObject({ id, status: 'cancelled', nextAt: null });
    const steps = await runner.store.listSteps(id);
    expect(steps).toMatchObject([
      { name: 'long-nap', kind: 'sleep', status: 'cancelled', finishedAt: expect.any(Number) },
    ]);
    expect(await runner.store.nextDueAt()).toBeNull();
    expect(after.of('after')).toBe(0);
  });
});
