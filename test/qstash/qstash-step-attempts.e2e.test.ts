import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@upstash/workflow';
import { attemptsOfStep } from '../../view/attempts.js';
import { closeStarted, startTestRunner, waitForFinish } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/**
 * "Attempts for this step" on an Upstash-protocol run, with a real runner and the real
 * @upstash/workflow: each step row links to the delivery during which the app produced it (and the
 * failed tries of that same message), parallel branches each to their own delivery.
 */

const apps: UpstashApp[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps.splice(0)) await app.close();
});

describe('QStash engine: the deliveries that ran each step', () => {
  it('links every step to its own deliveries, a retried step to its failed try too', async () => {
    const runner = await startTestRunner();
    let bFailuresLeft = 1;
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const app = await startUpstashApp(runner, {
      steps: {
        route: async (context) => {
          await context.run('a', async () => 'a');
          await context.run('b', async () => {
            if (bFailuresLeft-- > 0) throw new Error('flaky once');
            return 'b';
          });
          // Both branches in flight at once: each result must link to its own delivery.
          await Promise.all([
            context.run('c', () => pause(80).then(() => 'c')),
            context.run('d', () => pause(20).then(() => 'd')),
          ]);
        },
      },
    });
    apps.push(app);
    const env = upstashEnv(runner);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId: id } = await client.trigger({
      url: `${app.url}/steps`,
      body: {},
      retries: 2,
      retryDelay: '20',
    });
    const { run, steps, attempts } = await waitForFinish(runner.runner, id, 20_000);
    expect(run).toMatchObject({ status: 'completed', protocol: 'upstash' });

    const byName = (name: string) => {
      const step = steps.find((s) => s.name === name);
      if (!step)
        throw new Error(`Expected a step named ${name}, but the run has ${steps.map((s) => s.name).join(', ')}.`);
      return attemptsOfStep(run, attempts, step);
    };
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(byName);
    expect(a!.map((x) => x.responseStatus)).toEqual([200]);
    // b: its first try failed (500), the retry of the same message produced it.
    expect(b!.map((x) => x.responseStatus)).toEqual([500, 200]);
    expect(new Set(b!.map((x) => x.requestHeaders['upstash-message-id'])).size).toBe(1);
    expect(c).toHaveLength(1);
    expect(d).toHaveLength(1);
    expect(c![0]!.seq).not.toBe(d![0]!.seq);
    // No delivery is claimed by two steps.
    const all = [a, b, c, d].flatMap((list) => list!.map((x) => x.seq));
    expect(new Set(all).size).toBe(all.length);
  });

  it('links a sleep, a wait and a call to the deliveries that resolved them', async () => {
    const runner = await startTestRunner();
    const app = await startUpstashApp(
      runner,
      {
        resolved: {
          route: async (context) => {
            await context.sleep('nap', 1);
            await context.waitForEvent('hold', `go-${context.workflowRunId}`, { timeout: 60 });
            await context.call('ask', { url: `${app.url}/echo`, method: 'POST', body: '{"q":1}' });
          },
        },
      },
      upstashEnv(runner),
      (hono) => hono.post('/echo', (c) => c.json({ ok: true })),
    );
    apps.push(app);
    const env = upstashEnv(runner);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId: id } = await client.trigger({ url: `${app.url}/resolved`, body: {} });
    await vi.waitFor(async () => expect(await client.getWaiters({ eventId: `go-${id}` })).toHaveLength(1), {
      timeout: 10_000,
    });
    await client.notify({ eventId: `go-${id}`, eventData: 'now' });
    const { run, steps, attempts } = await waitForFinish(runner.runner, id, 20_000);
    expect(run.status).toBe('completed');
    const linked = (name: string) => attemptsOfStep(run, attempts, steps.find((s) => s.name === name)!);
    // The sleep's end and the wait's event: each the delivery of its own result message.
    for (const name of ['nap', 'hold'])
      expect(
        linked(name).map((x) => x.responseStatus),
        name,
      ).toEqual([200]);
    // The call: its request to the target, then the callback that brought the answer back (then the
    // delivery of its result, as a sleep's, once that delivery's attempt is logged: it ends the run).
    const call = linked('ask');
    expect(call.slice(0, 2).map((x) => x.requestUrl)).toEqual([`${app.url}/echo`, `${app.url}/resolved`]);
    expect(call[1]!.requestHeaders['upstash-workflow-stepid']).toBe(String(steps.find((s) => s.name === 'ask')!.index));
    const seqs = [...linked('nap'), ...linked('hold'), ...call].map((x) => x.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
  });
});
