import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@upstash/workflow';
import { closeStarted, startTestRunner, waitForFinish, waitForRun, type TestRunner } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/** `Client.cancel` and `Client.logs` of the real @upstash/workflow against a real runner (SQLite). */

let apps: UpstashApp[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps) await app.close();
  apps = [];
});

const workflows = {
  // Waits for an event nobody sends: stays running until cancelled.
  parked: {
    route: async (context: any) => {
      await context.run('first', async () => 1);
      await context.waitForEvent('park', `park-${context.workflowRunId}`, { timeout: 3600 });
    },
  },
  twoSteps: {
    route: async (context: any) => {
      const a = await context.run('a', async () => 'A');
      const b = await context.run('b', async () => `${a}B`);
      return { b };
    },
  },
};

async function setup(): Promise<{ runner: TestRunner; app: UpstashApp; client: Client }> {
  const runner = await startTestRunner();
  const app = await startUpstashApp(runner, workflows);
  apps.push(app);
  const env = upstashEnv(runner);
  return { runner, app, client: new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN }) };
}

/** Resolves once the run has committed at least `count` steps (it is past them and waiting). */
const atStep = (runner: TestRunner, runId: string, count: number) =>
  waitForRun(runner.store, runId, (run) => run.status === 'running', 10_000).then(async () => {
    for (let i = 0; i < 400; i++) {
      if ((await runner.store.listSteps(runId)).length >= count) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`run ${runId} did not reach ${count} steps`);
  });

describe('Client.cancel and Client.logs with the real @upstash/workflow', () => {
  it('cancels by id, by URL prefix and all, counting only the runs it cancelled', async () => {
    const { runner, app, client } = await setup();
    const ids = await Promise.all(
      [1, 2, 3, 4].map(
        async (n) =>
          (await client.trigger({ url: `${app.url}/parked`, body: { n }, workflowRunId: `park-${n}` })).workflowRunId,
      ),
    );
    for (const id of ids) await atStep(runner, id, 2);
    expect(await client.cancel({ ids: ids[0]! })).toEqual({ cancelled: 1 });
    expect(await client.cancel({ ids: [ids[0]!, 'wfr_nobody'] })).toEqual({ cancelled: 0 });
    expect((await runner.store.getRun(ids[0]!))?.status).toBe('cancelled');
    expect(await client.cancel({ urlStartingWith: `${app.url}/park` })).toMatchObject({ cancelled: 3 });
    for (const id of ids) expect((await runner.store.getRun(id))?.status).toBe('cancelled');
    const another = (await client.trigger({ url: `${app.url}/parked`, body: {}, workflowRunId: 'park-5' }))
      .workflowRunId;
    await atStep(runner, another, 2);
    expect(await client.cancel({ all: true })).toMatchObject({ cancelled: 1 });
    expect((await runner.store.getRun(another))?.status).toBe('cancelled');
  });

  it('lists runs as WorkflowRunLog, newest start first, with filters and a cursor', async () => {
    const { runner, app, client } = await setup();
    const done = (await client.trigger({ url: `${app.url}/twoSteps`, body: { x: 1 }, workflowRunId: 'logs-done' }))
      .workflowRunId;
    await waitForFinish(runner.runner, done);
    const parked = (await client.trigger({ url: `${app.url}/parked`, body: {}, workflowRunId: 'logs-parked' }))
      .workflowRunId;
    await atStep(runner, parked, 2);

    const one = await client.logs({ workflowRunId: done });
    expect(one.runs).toHaveLength(1);
    const log = one.runs[0]!;
    expect(log).toMatchObject({
      workflowRunId: done,
      workflowUrl: `${app.url}/twoSteps`,
      workflowState: 'RUN_SUCCESS',
    });
    expect(typeof log.workflowRunCompletedAt).toBe('number');
    expect(JSON.parse(log.workflowRunResponse!)).toEqual({ b: 'AB' });
    expect(
      log.steps.map((group) => group.steps.map((step) => ('stepName' in step ? step.stepName : undefined))),
    ).toEqual([['init'], ['a'], ['b']]);
    expect(log.steps[1]!.steps[0]).toMatchObject({ stepType: 'Run', out: 'A', state: 'STEP_SUCCESS' });
    // Message ids are those of the messages that carried the payload and each step.
    const messageIds = log.steps.map((group) => group.steps[0]!.messageId);
    expect(messageIds.every((id) => /^msg_/.test(id))).toBe(true);
    expect(new Set(messageIds).size).toBe(3);

    const all = await client.logs({});
    expect(all.runs.map((run) => run.workflowRunId)).toEqual([parked, done]);
    expect(all.runs[0]!.workflowState).toBe('RUN_STARTED');
    const failed = await client.logs({ state: 'RUN_FAILED' });
    expect(failed.runs).toEqual([]);
    const page = await client.logs({ count: 1 });
    expect(page.runs.map((run) => run.workflowRunId)).toEqual([parked]);
    expect(page.cursor).toEqual(expect.any(String));
    const rest = await client.logs({ count: 1, cursor: page.cursor });
    expect(rest.runs.map((run) => run.workflowRunId)).toEqual([done]);
    expect(rest.cursor).toBeUndefined();
    await client.cancel({ ids: parked });
  });

  it('refuses a filter it does not honour, naming it', async () => {
    const { client } = await setup();
    await expect(client.logs({ filter: { callerIp: '1.2.3.4' } } as never)).rejects.toThrow(/callerIp/);
  });
});
