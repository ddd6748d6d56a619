import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@upstash/workflow';
import { createWorkflow, serveMany } from '@upstash/workflow/hono';
import { qstashToken } from '../../runner-core/qstash/qstash-token.js';
import { closeStarted, startTestRunner, waitForFinish, type TestRunner } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/** `Client.logs` details the real @upstash/workflow reads: order, step types, an invoke outlived by its child. */

let apps: UpstashApp[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps) await app.close();
  apps = [];
});

type StepLog = { stepName?: string; stepType?: string; state?: string; out?: unknown };
const stepsOf = (log: { steps: { steps: unknown[] }[] }): StepLog[] =>
  log.steps.flatMap((group) => group.steps as StepLog[]);

/** The app's env with its token wrapped as QStash issues them (createWebhook decodes it). */
const wrappedEnv = (runner: TestRunner): Record<string, string> => ({
  ...upstashEnv(runner),
  QSTASH_TOKEN: qstashToken(runner.token),
});

describe('Client.logs as QStash lists runs', () => {
  it('newest start first, whatever the run ids, and the cursor goes on from there', async () => {
    const runner = await startTestRunner();
    const env = upstashEnv(runner);
    const app = await startUpstashApp(
      runner,
      { quick: { route: async (context) => context.run('only', async () => 1) } },
      env,
    );
    apps.push(app);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    // Started in this order; their ids sort the other way round.
    const started: string[] = [];
    for (const id of ['order-z', 'order-m', 'order-a']) {
      const { workflowRunId } = await client.trigger({ url: `${app.url}/quick`, body: {}, workflowRunId: id });
      await waitForFinish(runner.runner, workflowRunId);
      started.push(workflowRunId);
    }
    const newestFirst = [...started].reverse();
    expect((await client.logs({})).runs.map((run) => run.workflowRunId)).toEqual(newestFirst);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const answer = await client.logs({ count: 1, ...(cursor !== undefined && { cursor }) });
      seen.push(...answer.runs.map((run) => run.workflowRunId));
      cursor = answer.cursor;
      if (cursor === undefined) break;
    }
    expect(seen).toEqual(newestFirst);
    await expect(client.logs({ cursor: 'not-a-cursor' })).rejects.toThrow(/cursor/);
  });

  it('each step with the type the SDK gave it: Notify, SleepUntil, CreateWebhook, WaitForWebhook', async () => {
    const runner = await startTestRunner();
    const env = wrappedEnv(runner);
    const app = await startUpstashApp(
      runner,
      {
        kinds: {
          route: async (context) => {
            const at = await context.run('at', async () => Date.now() / 1000 + 0.5);
            await context.sleepUntil('until', at);
            await context.notify('tell', `nobody-${context.workflowRunId}`, { x: 1 });
            const hook = await context.createWebhook('hook');
            await context.waitForWebhook('wait-hook', hook, '1s');
          },
        },
      },
      env,
    );
    apps.push(app);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/kinds`, body: {} });
    const { run } = await waitForFinish(runner.runner, workflowRunId, 15_000);
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    const [log] = (await client.logs({ workflowRunId })).runs;
    expect(stepsOf(log!).map((step) => [step.stepName, step.stepType])).toEqual([
      ['init', 'Initial'],
      ['at', 'Run'],
      ['until', 'SleepUntil'],
      ['tell', 'Notify'],
      ['hook', 'CreateWebhook'],
      ['wait-hook', 'WaitForWebhook'],
    ]);
  });

  it('an invoke step whose run failed before its child ended shows the child: running, then its result', async () => {
    const runner = await startTestRunner();
    const env = upstashEnv(runner);
    const child = createWorkflow(
      async (context: any) => {
        await context.waitForEvent('hold', `release-${context.workflowRunId}`, { timeout: 3600 });
        return context.run('answer', async () => 'from the child');
      },
      { env },
    );
    const parent = createWorkflow(
      async (context: any) => {
        await Promise.all([
          context.invoke('ask-child', { workflow: child, body: {} }),
          context.run('boom', async () => {
            throw new Error('the parent fails first');
          }),
        ]);
      },
      { env },
    );
    const app = await startUpstashApp(runner, {}, env, (hono) => {
      hono.post('/wf/*', serveMany({ parent, child }));
    });
    apps.push(app);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/wf/parent`, body: {}, retries: 0 });
    const { run } = await waitForFinish(runner.runner, workflowRunId, 15_000);
    expect(run.status).toBe('failed');
    const childId = (await runner.store.listRuns({})).runs.find((r) => r.id !== workflowRunId)!.id;
    const invokeStep = async (): Promise<StepLog | undefined> =>
      stepsOf((await client.logs({ workflowRunId })).runs[0]!).find((step) => step.stepName === 'ask-child');
    expect(await invokeStep()).toMatchObject({ stepType: 'Invoke', state: 'STEP_PROGRESS' });
    await vi.waitFor(async () => expect((await client.getWaiters({ eventId: `release-${childId}` })).length).toBe(1), {
      timeout: 10_000,
    });
    await client.notify({ eventId: `release-${childId}`, eventData: 'go' });
    expect((await waitForFinish(runner.runner, childId, 15_000)).run.status).toBe('completed');
    expect(await invokeStep()).toMatchObject({
      stepType: 'Invoke',
      state: 'STEP_SUCCESS',
      out: { body: '"from the child"', isFailed: false, isCanceled: false },
    });
  });
});
