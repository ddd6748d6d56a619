import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client, WorkflowNonRetryableError } from '@upstash/workflow';
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
    hono.post('/echo', async (c) => c.json({ echoed: await c.req.json(), authorized: c.req.header('authorization') === 'Bearer secret-call' }, 201));
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
          const call = await context.call('echo', { url: `${app.url}/echo`, method: 'POST', body: JSON.stringify({ sum: a + b }), headers: { authorization: 'Bearer secret-call' } });
          return { sum: a + b, status: call.status, body: call.body };
        },
      },
    });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/mixed`, body: {} });
    const { run, steps } = await waitForFinish(runner.runner, workflowRunId, 20_000);
    expect(run.status).toBe('completed');
    expect(JSON.parse(JSON.stringify(run.output))).toBeTruthy();
    const detail = (await (await fetch(`${runner.url}/v1/runs/${workflowRunId}`, { headers: { authorization: `Bearer ${runner.token}` } })).json()) as {
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
          failureFunction: async ({ context, failStatus, failResponse }: { context: { requestPayload: unknown }; failStatus: number; failResponse: string }) => {
            failures.push({ failStatus, failResponse, payload: context.requestPayload });
          },
        },
      },
    });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/failing`, body: { id: 7 }, retries: 1, retryDelay: '50' });
    const { run, attempts } = await waitForFinish(runner.runner, workflowRunId, 20_000);
    expect(run.status).toBe('failed');
    expect(run.error?.message).toContain('always broken');
    await vi.waitFor(() => expect(failures).toHaveLength(1), { timeout: 10_000 });
    expect(failures[0]).toMatchObject({ failStatus: 500, failResponse: 'always broken', payload: { id: 7 } });
    await vi.waitFor(async () => expect((await runner.store.getRun(workflowRunId))!.failureCall).toBe('delivered'));
    // One first try and one retry of the failing step (Upstash-Retries: 1), each an attempt.
    expect(attempts.filter((a) => a.responseStatus === 500)).toHaveLength(2);
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
});
