import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client, WorkflowNonRetryableError, WorkflowRetryAfterError } from '@upstash/workflow';
import { createWorkflow, serveMany } from '@upstash/workflow/hono';
import { closeStarted, startTestRunner, waitForFinish, type TestRunner } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type RouteFunction, type UpstashApp } from './upstash-app.js';

/**
 * The QStash engine's delivery semantics against the real @upstash/workflow: parallel steps,
 * sleep (delayed messages), context.call made by the runner, failure callbacks, 489, cancel,
 * and the lazy fetch of a run's messages when they are too large to send.
 */

let apps: UpstashApp[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps) await app.close();
  apps = [];
});

async function setup(
  workflows: Record<string, { route: RouteFunction; options?: Record<string, unknown> }>,
  runnerOptions: Parameters<typeof startTestRunner>[0] = {},
): Promise<{ runner: TestRunner; app: UpstashApp; client: Client }> {
  const runner = await startTestRunner(runnerOptions);
  const app = await startUpstashApp(runner, workflows, upstashEnv(runner), (hono) => {
    hono.post('/echo', async (c) =>
      c.json({ echoed: await c.req.json(), authorized: c.req.header('authorization') === 'Bearer secret-call' }, 201),
    );
  });
  apps.push(app);
  const env = upstashEnv(runner);
  return { runner, app, client: new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN }) };
}

describe('QStash engine: what the SDK asks of QStash', () => {
  it('runs parallel steps, a sleep and a context.call made by the runner', async () => {
    const { runner, app, client } = await setup({
      mixed: {
        route: async (context) => {
          const [a, b] = await Promise.all([context.run('a', async () => 1), context.run('b', async () => 2)]);
          await context.sleep('nap', 1);
          const call = await context.call('echo', {
            url: `${app.url}/echo`,
            method: 'POST',
            body: JSON.stringify({ sum: a + b }),
            headers: { authorization: 'Bearer secret-call' },
          });
          return { sum: a + b, status: call.status, body: call.body };
        },
      },
    });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/mixed`, body: {} });
    const { run, steps } = await waitForFinish(runner.runner, workflowRunId, 20_000);
    expect(run.status).toBe('completed');
    expect(JSON.parse(JSON.stringify(run.output))).toBeTruthy();
    const detail = (await (
      await fetch(`${runner.url}/v1/runs/${workflowRunId}`, { headers: { authorization: `Bearer ${runner.token}` } })
    ).json()) as {
      run: { output: { sum: number; status: number; body: { echoed: unknown; authorized: boolean } } };
      steps: { index: number; name: string; kind: string; status: string; output?: unknown }[];
    };
    expect(detail.run.output).toEqual({ sum: 3, status: 201, body: { echoed: { sum: 3 }, authorized: true } });
    expect(steps.map((s) => [s.name, s.kind, s.status, s.group])).toEqual([
      ['a', 'run', 'succeeded', 1],
      ['b', 'run', 'succeeded', 1],
      ['nap', 'sleep', 'succeeded', null],
      ['echo', 'call', 'succeeded', null],
    ]);
    // The call's credential never reaches the store: its row shows it redacted.
    expect(JSON.stringify(await runner.store.listSteps(workflowRunId))).not.toContain('secret-call');
    expect(JSON.stringify(await runner.store.listAttempts(workflowRunId))).not.toContain('secret-call');
  });

  it("a call whose target never answers gives the workflow a 502 saying why in one line, without the runner's stack", async () => {
    const { runner, app, client } = await setup({
      unanswered: {
        route: async (context) => {
          // Nothing listens on port 1: the connection is refused.
          const call = await context.call('nobody', { url: 'http://127.0.0.1:1/x', method: 'POST', retries: 0 });
          return { status: call.status, body: call.body };
        },
      },
    });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/unanswered`, body: {} });
    const { run } = await waitForFinish(runner.runner, workflowRunId, 20_000);
    expect(run.status).toBe('completed');
    const detail = (await (
      await fetch(`${runner.url}/v1/runs/${workflowRunId}`, { headers: { authorization: `Bearer ${runner.token}` } })
    ).json()) as { run: { output: { status: number; body: unknown } } };
    const output = detail.run.output;
    expect(output.status, JSON.stringify(output)).toBe(502);
    expect(String(output.body)).toMatch(/ECONNREFUSED|refused/i);
    // One line, no frame of the runner's code (the app is another party).
    expect(String(output.body)).not.toMatch(/\n|\s+at\s+[\w.<>]+[\s(]/);
  });

  it('a step that keeps failing fails the run after its retries and calls the failureFunction', async () => {
    const failures: { failStatus: number; failResponse: string; payload: unknown }[] = [];
    const { runner, app, client } = await setup({
      failing: {
        route: async (context) => {
          await context.run('boom', async () => {
            throw new Error('always broken');
          });
        },
        options: {
          failureFunction: async ({
            context,
            failStatus,
            failResponse,
          }: {
            context: { requestPayload: unknown };
            failStatus: number;
            failResponse: string;
          }) => {
            failures.push({ failStatus, failResponse, payload: context.requestPayload });
          },
        },
      },
    });
    const { workflowRunId } = await client.trigger({
      url: `${app.url}/failing`,
      body: { id: 7 },
      retries: 1,
      retryDelay: '50',
    });
    const { run, attempts } = await waitForFinish(runner.runner, workflowRunId, 20_000);
    expect(run.status).toBe('failed');
    expect(run.error?.message).toContain('always broken');
    await vi.waitFor(() => expect(failures).toHaveLength(1), { timeout: 10_000 });
    expect(failures[0]).toMatchObject({ failStatus: 500, failResponse: 'always broken', payload: { id: 7 } });
    await vi.waitFor(async () => expect((await runner.store.getRun(workflowRunId))!.failureCall).toBe('delivered'));
    // One first try and one retry of the failing step (Upstash-Retries: 1), each an attempt.
    expect(attempts.filter((a) => a.responseStatus === 500)).toHaveLength(2);
    expect(attempts.map((a) => a.outcome)).toEqual(
      expect.arrayContaining(['retry', 'failed', 'failure-function done']),
    );
  });

  it('a non-retryable error (489) fails the run at once; context.cancel() cancels it', async () => {
    const { runner, app, client } = await setup({
      fatal: {
        route: async (context) => {
          await context.run('check', async () => {
            throw new WorkflowNonRetryableError('not this one');
          });
        },
      },
      cancelling: {
        route: async (context) => {
          await context.run('first', async () => 'done');
          await context.cancel();
          await context.run('never', async () => 'never');
        },
      },
    });
    const fatal = await client.trigger({ url: `${app.url}/fatal`, body: {}, retries: 3, retryDelay: '50' });
    const failed = await waitForFinish(runner.runner, fatal.workflowRunId, 10_000);
    expect(failed.run.status).toBe('failed');
    expect(failed.attempts.filter((a) => a.responseStatus === 489)).toHaveLength(1);
    const cancelling = await client.trigger({ url: `${app.url}/cancelling`, body: {} });
    const cancelled = await waitForFinish(runner.runner, cancelling.workflowRunId, 10_000);
    expect(cancelled.run.status).toBe('cancelled');
    expect(cancelled.steps.map((s) => s.name)).toEqual(['first']);
  });

  it('fetches the run lazily when its messages are too large to send inline', async () => {
    const { runner, app, client } = await setup(
      {
        big: {
          route: async (context) => {
            const x = await context.run('x', async () => 'x'.repeat(500));
            const y = await context.run('y', async () => x.length);
            return y;
          },
        },
      },
      { runner: { inlineStepsLimitBytes: 300 } },
    );
    const { workflowRunId } = await client.trigger({ url: `${app.url}/big`, body: {} });
    const { run } = await waitForFinish(runner.runner, workflowRunId, 10_000);
    expect(run.status).toBe('completed');
    expect(runner.requests.some((r) => r === `GET /v2/workflows/runs/${workflowRunId}`)).toBe(true);
  });

  it('429 + Retry-After waits as told; wf cancel (POST /v1/runs/:id/cancel) stops a sleeping run; resume and rerun are refused', async () => {
    let tries = 0;
    const { runner, app, client } = await setup({
      later: {
        route: async (context) => {
          return await context.run('once-busy', async () => {
            tries += 1;
            if (tries === 1) throw new WorkflowRetryAfterError('busy', 1);
            return tries;
          });
        },
      },
      sleepy: {
        route: async (context) => {
          await context.run('before', async () => 'ok');
          await context.sleep('long', 3600);
          await context.run('after', async () => 'never');
        },
      },
    });
    const later = await client.trigger({ url: `${app.url}/later`, body: {}, retries: 1, retryDelay: '999999' });
    const done = await waitForFinish(runner.runner, later.workflowRunId, 10_000);
    expect(done.run.status).toBe('completed');
    const busy = done.attempts.find((a) => a.responseStatus === 429)!;
    const next = done.attempts[done.attempts.indexOf(busy) + 1]!;
    // Retry-After: 1 s, not the 999999 ms of the retry delay.
    expect(next.startedAt - busy.startedAt).toBeGreaterThanOrEqual(900);

    const sleepy = await client.trigger({ url: `${app.url}/sleepy`, body: {} });
    await vi.waitFor(async () =>
      expect((await runner.store.listSteps(sleepy.workflowRunId)).map((s) => [s.name, s.status])).toEqual([
        ['before', 'succeeded'],
        ['long', 'running'],
      ]),
    );
    const auth = { authorization: `Bearer ${runner.token}` };
    const cancel = await fetch(`${runner.url}/v1/runs/${sleepy.workflowRunId}/cancel`, {
      method: 'POST',
      headers: auth,
    });
    expect(cancel.status).toBe(200);
    const cancelled = await waitForFinish(runner.runner, sleepy.workflowRunId);
    expect(cancelled.run.status).toBe('cancelled');
    expect(cancelled.steps.find((s) => s.name === 'long')?.status).toBe('cancelled');
    for (const action of ['resume', 'rerun']) {
      const refused = await fetch(`${runner.url}/v1/runs/${sleepy.workflowRunId}/${action}`, {
        method: 'POST',
        headers: auth,
      });
      expect(refused.status).toBe(409);
      expect(await refused.text()).toContain('UPSTASH_RUN');
    }
    // The sleep's message is dropped, not delivered later: the lazy fetch answers 404 for the ended run.
    const fetched = await fetch(`${runner.url}/v2/workflows/runs/${sleepy.workflowRunId}`, { headers: auth });
    expect(fetched.status).toBe(404);
  });

  it('an app that is down is tried again without spending retries, and the run goes on when it is back', async () => {
    const runner = await startTestRunner({ runner: { unreachable: { baseMs: 50, capMs: 200 } } });
    let app = await startUpstashApp(runner, {
      flaky: { route: async (context) => context.run('only', async () => 'up') },
    });
    const port = new URL(app.url).port;
    const env = upstashEnv(runner);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    await app.close();
    // Published while the app is down: the runner keeps trying its URL.
    const { workflowRunId } = await client.trigger({ url: `http://127.0.0.1:${port}/flaky`, body: {}, retries: 0 });
    await vi.waitFor(async () => expect((await runner.store.getRun(workflowRunId))?.unreachableSince).not.toBeNull(), {
      timeout: 5_000,
    });
    app = await startUpstashApp(
      runner,
      { flaky: { route: async (context) => context.run('only', async () => 'up') } },
      env,
      undefined,
      Number(port),
    );
    apps.push(app);
    const { run, attempts } = await waitForFinish(runner.runner, workflowRunId, 10_000);
    expect(run).toMatchObject({ status: 'completed', unreachableSince: null });
    expect(attempts.some((a) => a.outcome === 'unreachable' && a.responseStatus === null)).toBe(true);
  });

  it('flow control: runs triggered with one key and parallelism 1 never deliver two steps at once', async () => {
    let inside = 0;
    let most = 0;
    const { runner, app, client } = await setup({
      limited: {
        route: async (context) => {
          for (const name of ['one', 'two']) {
            await context.run(name, async () => {
              inside += 1;
              most = Math.max(most, inside);
              await new Promise((r) => setTimeout(r, 60));
              inside -= 1;
            });
          }
        },
      },
    });
    const triggered = await client.trigger(
      [1, 2, 3].map(() => ({ url: `${app.url}/limited`, body: {}, flowControl: { key: 'tenant-1', parallelism: 1 } })),
    );
    for (const { workflowRunId } of triggered)
      expect((await waitForFinish(runner.runner, workflowRunId, 20_000)).run.status).toBe('completed');
    // Without the key the three runs overlap (3 at once): the limit is what keeps this at 1.
    expect(most).toBe(1);
  });

  it('refuses a destination outside the allowed origins (403 naming the setting)', async () => {
    const runner = await startTestRunner();
    const refused = await fetch(`${runner.url}/v2/publish/https://example.com/hook`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}` },
      body: 'x',
    });
    expect(refused.status).toBe(403);
    expect(await refused.text()).toContain('--allow-origin https://example.com');
  });

  it('context.invoke: the child runs on its own payload and its result comes back to the invoker', async () => {
    const runner = await startTestRunner();
    const env = upstashEnv(runner);
    const child = createWorkflow(
      async (context: any) => context.run('double', async () => (context.requestPayload as { n: number }).n * 2),
      { env },
    );
    const parent = createWorkflow(
      async (context: any) => {
        const answer = await context.invoke('ask-child', { workflow: child, body: { n: 21 } });
        return { body: answer.body, isFailed: answer.isFailed };
      },
      { env },
    );
    const app = await startUpstashApp(runner, {}, env, (hono) => {
      hono.post('/wf/*', serveMany({ parent, child }));
    });
    apps.push(app);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/wf/parent`, body: {} });
    const { run, steps } = await waitForFinish(runner.runner, workflowRunId, 15_000);
    expect(run.status).toBe('completed');
    const detail = (await (
      await fetch(`${runner.url}/v1/runs/${workflowRunId}`, { headers: { authorization: `Bearer ${runner.token}` } })
    ).json()) as { run: { output: unknown } };
    expect(detail.run.output).toEqual({ body: 42, isFailed: false });
    expect(steps.map((s) => [s.name, s.kind, s.status])).toEqual([['ask-child', 'invoke', 'succeeded']]);
    // The child is a run of its own, started with the payload alone.
    const children = (await runner.store.listRuns({})).runs.filter((r) => r.id !== workflowRunId);
    expect(children.map((r) => [r.url, r.body, r.status])).toEqual([[`${app.url}/wf/child`, '{"n":21}', 'completed']]);
    // Linked as native parent and child runs are, for the dashboards.
    const childDetail = (await (
      await fetch(`${runner.url}/v1/runs/${children[0]!.id}`, { headers: { authorization: `Bearer ${runner.token}` } })
    ).json()) as { run: { parentRunId?: string } };
    expect(childDetail.run.parentRunId).toBe(workflowRunId);
    expect(steps[0]!.eventId).toBe(`wf-child:${children[0]!.id}`);
  });

  it('a delivery whose settling failed (a store fault) is delivered again after its lease, and the run completes', async () => {
    const { runner, app, client } = await setup(
      {
        steady: {
          route: async (context) => {
            const one = await context.run('one', async () => 1);
            await context.sleep('pause', 2);
            return [one, await context.run('two', async () => 2)];
          },
        },
      },
      { runner: { leaseMs: 600 } },
    );
    const messages = runner.runner.qstash!.context.messages;
    const settle = messages.settle.bind(messages);
    let faults = 0;
    let faulted = '';
    // Injected fault: the store refuses the first settle of a delivered message.
    messages.settle = async (...args) => {
      if (faults === 0 && args[2].status === 'delivered') {
        faults += 1;
        faulted = args[0];
        throw new Error('injected: the store is unavailable');
      }
      return settle(...args);
    };
    const { workflowRunId } = await client.trigger({ url: `${app.url}/steady`, body: {} });
    // While the run sleeps, the unsettled message is delivered again once its lease ended.
    await vi.waitFor(
      async () =>
        expect((await messages.runMessages(workflowRunId)).find((m) => m.id === faulted)?.status).toBe('delivered'),
      { timeout: 5_000 },
    );
    expect((await runner.store.getRun(workflowRunId))?.status).toBe('running');
    const { run, steps } = await waitForFinish(runner.runner, workflowRunId, 15_000);
    expect(faults).toBe(1);
    expect(run.status).toBe('completed');
    expect(steps.map((s) => [s.name, s.status])).toEqual([
      ['one', 'succeeded'],
      ['pause', 'succeeded'],
      ['two', 'succeeded'],
    ]);
  });

  it('a child run cancelled with wf cancel answers its invoker as cancelled', async () => {
    const runner = await startTestRunner();
    const env = upstashEnv(runner);
    const child = createWorkflow(async (context: any) => context.sleep('forever', 3600), { env });
    const parent = createWorkflow(
      async (context: any) => {
        const answer = await context.invoke('ask-child', { workflow: child, body: {} });
        return { isCanceled: answer.isCanceled };
      },
      { env },
    );
    const app = await startUpstashApp(runner, {}, env, (hono) => {
      hono.post('/wf/*', serveMany({ parent, child }));
    });
    apps.push(app);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/wf/parent`, body: {} });
    const childId = await vi.waitFor(async () => {
      const found = (await runner.store.listRuns({})).runs.find((r) => r.id !== workflowRunId);
      if (!found) throw new Error('no child yet');
      return found.id;
    });
    const cancel = await fetch(`${runner.url}/v1/runs/${childId}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}` },
    });
    expect(cancel.status).toBe(200);
    const { run } = await waitForFinish(runner.runner, workflowRunId, 10_000);
    expect(run.status).toBe('completed');
    const detail = (await (
      await fetch(`${runner.url}/v1/runs/${workflowRunId}`, { headers: { authorization: `Bearer ${runner.token}` } })
    ).json()) as { run: { output: unknown } };
    expect(detail.run.output).toEqual({ isCanceled: true });
  });

  it("a step's duration is about how long the app worked on it (the delivery it ran in)", async () => {
    const { runner, app, client } = await setup({
      slow: {
        route: async (context) => context.run('slow', async () => new Promise((r) => setTimeout(() => r('done'), 80))),
      },
    });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/slow`, body: {} });
    const { steps } = await waitForFinish(runner.runner, workflowRunId, 10_000);
    expect(steps[0]!.durationMs).toBeGreaterThanOrEqual(70);
    expect(steps[0]!.durationMs).toBeLessThan(5_000);
  });
});
