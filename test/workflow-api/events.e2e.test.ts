import { describe, expect, it } from 'vitest';
import type { Workflow } from '../../serve/core/handler.js';
import { gate, startThroughApp, waitForFinish, waitForRun } from '../helpers/runner.js';
import { api, notify, useWorlds, value } from './world.js';

/** `context.waitForEvent` and `POST /v1/events/:eventId` on the runner API, races included. */

const worlds = useWorlds();

/** A workflow that waits for the event id in its payload and returns what it got. */
const waiter: Workflow<{ eventId: string; timeout?: number }> = async (context) => {
  const { eventId, timeout } = context.requestPayload;
  return context.waitForEvent('approval', eventId, timeout === undefined ? {} : { timeout });
};

describe('context.waitForEvent', () => {
  it('parks the run as waiting until a notify delivers the data: { eventData, timeout: false }', async () => {
    const { runner, app, openDrives } = await worlds.setup(waiter);
    const id = await startThroughApp(app.url, { eventId: 'order-1' });
    const waiting = await waitForRun(runner.runner, id, (r) => r.status === 'waiting');
    const [step] = await runner.store.listSteps(id);
    expect(step).toMatchObject({
      name: 'approval',
      kind: 'wait',
      status: 'running',
      eventId: 'order-1',
      until: expect.any(Number),
    });
    // The default timeout is 7 days; the run is due again then.
    expect(step!.until! - step!.startedAt).toBeGreaterThan(7 * 24 * 3_600_000 - 60_000);
    expect(waiting.nextAt).toBe(step!.until);
    expect(openDrives()).toBe(0);

    const answer = await notify(runner, 'order-1', { approved: true, by: 'ana' });
    expect(answer).toEqual({ status: 200, body: { delivered: [id], kept: false } });
    const { run, steps, attempts } = await waitForFinish(runner.runner, id);
    expect(run.status).toBe('completed');
    expect(value(run.output)).toEqual({ eventData: { approved: true, by: 'ana' }, timeout: false });
    expect(steps).toMatchObject([{ kind: 'wait', status: 'succeeded' }]);
    expect(attempts.map((a) => a.outcome)).toEqual(['suspend', 'done']);
  });

  it('is running again, not waiting, while the steps after a delivered event execute', async () => {
    const inStep = gate();
    const release = gate();
    worlds.defer(release.open);
    const { runner, app } = await worlds.setup(async (context) => {
      const { eventData } = await context.waitForEvent('approval', 'order-2');
      return context.run('ship', async () => {
        inStep.open();
        await release.promise;
        return `shipped ${String(eventData)}`;
      });
    });
    const id = await startThroughApp(app.url);
    await waitForRun(runner.runner, id, (r) => r.status === 'waiting');
    await notify(runner, 'order-2', 'yes');
    await inStep.promise;
    expect((await runner.store.getRun(id))?.status).toBe('running');
    release.open();
    expect(value((await waitForFinish(runner.runner, id)).run.output)).toBe('shipped yes');
  });

  it('times out: { eventData: undefined, timeout: true }', async () => {
    const { runner, app } = await worlds.setup(waiter);
    const id = await startThroughApp(app.url, { eventId: 'never', timeout: 0.3 });
    const waiting = await waitForRun(runner.runner, id, (r) => r.status === 'waiting');
    const [step] = await runner.store.listSteps(id);
    expect(waiting.nextAt).toBe(step!.until);
    const { run, attempts } = await waitForFinish(runner.runner, id);
    expect(value(run.output)).toEqual({ eventData: undefined, timeout: true });
    expect(attempts[1]!.startedAt).toBeGreaterThanOrEqual(step!.until!);
  });

  it('answers a notify nobody waits for with { delivered: [], kept: true }', async () => {
    const { runner } = await worlds.setup(waiter);
    expect(await notify(runner, 'nobody', 1)).toEqual({ status: 200, body: { delivered: [], kept: true } });
  });

  it('refuses a notify without the token or with a body that is not an object', async () => {
    const { runner } = await worlds.setup(waiter);
    const anonymous = await fetch(`${runner.url}/v1/events/e`, { method: 'POST', body: '{}' });
    expect(anonymous.status).toBe(401);
    const array = await fetch(`${runner.url}/v1/events/e`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}` },
      body: '[1]',
    });
    expect(array.status).toBe(400);
  });

  it('wakes every run waiting for the same event id with one notify', async () => {
    const { runner, app } = await worlds.setup(waiter);
    const ids = [
      await startThroughApp(app.url, { eventId: 'shared' }),
      await startThroughApp(app.url, { eventId: 'shared' }),
    ];
    for (const id of ids) await waitForRun(runner.runner, id, (r) => r.status === 'waiting');
    const { body } = await notify(runner, 'shared', 'go');
    expect([...body.delivered].sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const { run } = await waitForFinish(runner.runner, id);
      expect(value(run.output)).toEqual({ eventData: 'go', timeout: false });
    }
  });
});

describe('a notify that arrives before the wait', () => {
  it('is kept when sent before the run starts, and delivered to the first wait, once', async () => {
    const { runner, app } = await worlds.setup(waiter);
    expect((await notify(runner, 'early', { n: 1 })).body).toEqual({ delivered: [], kept: true });
    const id = await startThroughApp(app.url, { eventId: 'early' });
    const { run } = await waitForFinish(runner.runner, id);
    expect(value(run.output)).toEqual({ eventData: { n: 1 }, timeout: false });

    // Taken: a later wait for the same id waits for a notify of its own.
    const later = await startThroughApp(app.url, { eventId: 'early' });
    await waitForRun(runner.runner, later, (r) => r.status === 'waiting');
    expect((await notify(runner, 'early', { n: 2 })).body).toEqual({ delivered: [later], kept: false });
    expect(value((await waitForFinish(runner.runner, later)).run.output)).toEqual({
      eventData: { n: 2 },
      timeout: false,
    });
  });

  it('is kept when sent while the step before the wait still runs, and delivered', async () => {
    const inStep = gate();
    const release = gate();
    worlds.defer(release.open);
    const { runner, app } = await worlds.setup(async (context) => {
      await context.run('send-request', async () => {
        inStep.open();
        await release.promise;
      });
      return context.waitForEvent('reply', 'reply-1', { timeout: '1h' });
    });
    const id = await startThroughApp(app.url);
    await inStep.promise;
    // The answer comes back before the route has even told the runner about the wait.
    expect((await notify(runner, 'reply-1', 'fast reply')).body).toEqual({ delivered: [], kept: true });
    release.open();
    const { run, steps } = await waitForFinish(runner.runner, id);
    expect(value(run.output)).toEqual({ eventData: 'fast reply', timeout: false });
    expect(steps.map((s) => [s.name, s.kind, s.status])).toEqual([
      ['send-request', 'run', 'succeeded'],
      ['reply', 'wait', 'succeeded'],
    ]);
  });

  it('is not delivered once kept longer than eventKeepMs', async () => {
    // The runner's clock jumps past the keep window: no real time has to pass.
    let skew = 0;
    const { runner, app } = await worlds.setup(
      waiter,
      {},
      { runner: { eventKeepMs: 60_000, now: () => Date.now() + skew } },
    );
    expect((await notify(runner, 'stale', 'old news')).body).toEqual({ delivered: [], kept: true });
    skew = 61_000;
    const id = await startThroughApp(app.url, { eventId: 'stale', timeout: 3600 });
    await waitForRun(runner.runner, id, (r) => r.status === 'waiting');
    expect((await notify(runner, 'stale', 'fresh news')).body).toEqual({ delivered: [id], kept: false });
    expect(value((await waitForFinish(runner.runner, id)).run.output)).toEqual({
      eventData: 'fresh news',
      timeout: false,
    });
  });
});

describe('notify through the API, checked against the run record', () => {
  it('shows the delivered wait with its output in GET /v1/runs/:id', async () => {
    const { runner, app } = await worlds.setup(waiter);
    const id = await startThroughApp(app.url, { eventId: 'shown' });
    await waitForRun(runner.runner, id, (r) => r.status === 'waiting');
    await notify(runner, 'shown', [1, 2]);
    await waitForFinish(runner.runner, id);
    const { body } = await api(runner, 'GET', `/v1/runs/${id}`);
    expect(body.steps).toMatchObject([{ kind: 'wait', eventId: 'shown', status: 'succeeded' }]);
    // Readable as JSON, and faithful in `outputEncoded`.
    expect(body.steps[0].output).toEqual({ eventData: [1, 2], timeout: false });
    expect(value(body.steps[0].outputEncoded)).toEqual({ eventData: [1, 2], timeout: false });
  });
});
