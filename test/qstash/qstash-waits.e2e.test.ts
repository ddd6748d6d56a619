import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@upstash/workflow';
import { decodeValue } from '../../protocol/values.js';
import { closeStarted, startTestRunner, waitForFinish, type TestRunner } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/**
 * `context.waitForEvent` with `Client.notify`, `Client.getWaiters`, the lookback of a notify that
 * names the run, timeouts and `wf notify` (Runner.notify), on a real, unchanged @upstash/workflow
 * app (Hono on Node) against a real runner on SQLite.
 */

let apps: UpstashApp[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps) await app.close();
  apps = [];
});

const waiting = {
  route: async (context: any) => {
    const { eventId, timeout } = context.requestPayload as { eventId: string; timeout?: number };
    const before = await context.run('before', async () => 'ready');
    const { eventData, timeout: timedOut } = await context.waitForEvent('wait for approval', eventId, {
      timeout: timeout ?? 60,
    });
    const after = await context.run('after', async () => ({ before, eventData, timedOut }));
    return after;
  },
};

async function setup(): Promise<{ runner: TestRunner; app: UpstashApp; client: Client }> {
  // A short poll: the wait timeouts are looked for at that pace.
  const runner = await startTestRunner({ runner: { pollMs: 100 } });
  const app = await startUpstashApp(runner, { waiting });
  apps.push(app);
  const env = upstashEnv(runner);
  return { runner, app, client: new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN }) };
}

/** Polls `GET /v2/waiters/:eventId` through the SDK until `count` waiters are there. */
async function waitersOf(
  client: Client,
  eventId: string,
  count: number,
): Promise<Awaited<ReturnType<Client['getWaiters']>>> {
  for (let i = 0; i < 200; i++) {
    const waiters = await client.getWaiters({ eventId });
    if (waiters.length >= count) return waiters;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`fewer than ${count} waiters on ${eventId} after 5 s`);
}

describe('waitForEvent and notify with the real @upstash/workflow', () => {
  it('Client.getWaiters lists the waiting run, Client.notify resumes it with the event data, and the wait is a step of the run', async () => {
    const { runner, app, client } = await setup();
    const { workflowRunId } = await client.trigger({ url: `${app.url}/waiting`, body: { eventId: 'order-1' } });
    const waiters = await waitersOf(client, 'order-1', 1);
    expect(waiters).toHaveLength(1);
    expect(waiters[0]).toMatchObject({ url: `${app.url}/waiting` });
    expect(waiters[0]!.deadline).toBeGreaterThan(Date.now() / 1000);
    const notified = await client.notify({ eventId: 'order-1', eventData: { approved: true } });
    expect(notified).toHaveLength(1);
    expect(notified[0]!.messageId).not.toBe('');
    const { run, steps } = await waitForFinish(runner.runner, workflowRunId);
    expect(run.status).toBe('completed');
    expect(decodeValue(run.output!)).toEqual({ before: 'ready', eventData: { approved: true }, timedOut: false });
    expect(steps.map((s) => [s.index, s.name, s.kind, s.status])).toEqual([
      [1, 'before', 'run', 'succeeded'],
      [2, 'wait for approval', 'wait', 'succeeded'],
      [3, 'after', 'run', 'succeeded'],
    ]);
    expect(decodeValue(steps[1]!.output!)).toEqual({ eventData: { approved: true }, timeout: false });
    expect(await client.getWaiters({ eventId: 'order-1' })).toEqual([]);
  });

  it('a notify naming the run before it waits is kept and taken by its wait (lookback); one without a run id is lost', async () => {
    const { runner, app, client } = await setup();
    expect(await client.notify({ eventId: 'early', eventData: 'lost' })).toEqual([]);
    const { workflowRunId } = await client.trigger({
      url: `${app.url}/waiting`,
      body: { eventId: 'early' },
      workflowRunId: 'lookback-1',
    });
    expect(await client.notify({ eventId: 'early', eventData: 'kept for the run', workflowRunId })).toEqual([]);
    const { run } = await waitForFinish(runner.runner, workflowRunId);
    expect(decodeValue(run.output!)).toEqual({ before: 'ready', eventData: 'kept for the run', timedOut: false });
  });

  it('a wait nobody notifies times out: the workflow goes on with timeout true', async () => {
    const { runner, app, client } = await setup();
    const { workflowRunId } = await client.trigger({
      url: `${app.url}/waiting`,
      body: { eventId: 'never', timeout: 1 },
    });
    const { run, steps } = await waitForFinish(runner.runner, workflowRunId, 15_000);
    expect(decodeValue(run.output!)).toEqual({ before: 'ready', timedOut: true });
    expect(decodeValue(steps[1]!.output!)).toEqual({ eventData: undefined, timeout: true });
  });

  it('wf notify (Runner.notify, POST /v1/events/:id/notify) reaches an Upstash wait too', async () => {
    const { runner, app, client } = await setup();
    const { workflowRunId } = await client.trigger({ url: `${app.url}/waiting`, body: { eventId: 'from-cli' } });
    await waitersOf(client, 'from-cli', 1);
    const result = await runner.runner.notify('from-cli', { by: 'wf notify' });
    expect(result.delivered).toContain(workflowRunId);
    const { run } = await waitForFinish(runner.runner, workflowRunId);
    expect(decodeValue(run.output!)).toEqual({ before: 'ready', eventData: { by: 'wf notify' }, timedOut: false });
  });
});
