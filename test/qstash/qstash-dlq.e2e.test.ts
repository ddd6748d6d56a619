import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@upstash/workflow';
import { closeStarted, startTestRunner, waitForFinish } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/** `client.dlq.list`, `delete`, `resume` and `restart` of the real @upstash/workflow against a real runner (SQLite). */

let apps: UpstashApp[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps) await app.close();
  apps = [];
});

describe('the DLQ with the real @upstash/workflow', () => {
  it('lists the message each failed run failed on, newest first, with its answer; deletes by id and all', async () => {
    const runner = await startTestRunner();
    const env = upstashEnv(runner);
    const app = await startUpstashApp(
      runner,
      {
        doomed: {
          route: async (context) => {
            await context.run('breaks', async () => {
              throw new Error('never works');
            });
          },
        },
        fine: { route: async (context) => context.run('works', async () => 1) },
      },
      env,
    );
    apps.push(app);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const failed: string[] = [];
    for (const n of [1, 2]) {
      const { workflowRunId } = await client.trigger({
        url: `${app.url}/doomed`,
        body: { n },
        retries: 0,
        label: `doomed-${n}`,
      });
      expect((await waitForFinish(runner.runner, workflowRunId, 15_000)).run.status).toBe('failed');
      failed.push(workflowRunId);
    }
    const { workflowRunId: completed } = await client.trigger({ url: `${app.url}/fine`, body: {} });
    expect((await waitForFinish(runner.runner, completed)).run.status).toBe('completed');

    const { messages, cursor } = await client.dlq.list();
    expect(cursor).toBeUndefined();
    expect(messages.map((m) => m.workflowRunId)).toEqual([...failed].reverse());
    const [newest] = messages;
    expect(newest).toMatchObject({
      workflowRunId: failed[1],
      workflowUrl: `${app.url}/doomed`,
      url: `${app.url}/doomed`,
      responseStatus: 500,
      maxRetries: 0,
      label: 'doomed-2',
      dlqId: expect.stringMatching(/^msg_/),
    });
    expect(newest!.responseBody).toContain('never works');
    expect(typeof newest!.workflowCreatedAt).toBe('number');
    expect(
      (await client.dlq.list({ filter: { workflowRunId: failed[0] } })).messages.map((m) => m.workflowRunId),
    ).toEqual([failed[0]]);
    const page = await client.dlq.list({ count: 1 });
    expect(page.messages.map((m) => m.workflowRunId)).toEqual([failed[1]]);
    expect((await client.dlq.list({ count: 1, cursor: page.cursor })).messages.map((m) => m.workflowRunId)).toEqual([
      failed[0],
    ]);
    await expect(client.dlq.list({ filter: { label: 'doomed-1' } })).rejects.toThrow(/label/);

    expect(await client.dlq.delete(newest!.dlqId)).toMatchObject({ deleted: 1 });
    expect(await client.dlq.delete(newest!.dlqId)).toMatchObject({ deleted: 0 });
    expect((await client.dlq.list()).messages.map((m) => m.workflowRunId)).toEqual([failed[0]]);
    expect(await client.dlq.delete({ all: true })).toMatchObject({ deleted: 1 });
    expect((await client.dlq.list()).messages).toEqual([]);
    // A letter that is gone is not resumed: refused, never a silent success.
    await expect(client.dlq.resume('msg_anything')).rejects.toThrow(/No DLQ message msg_anything/);
    // Retrying the failure function is not served: refused, naming the endpoint.
    await expect(client.dlq.retryFailureFunction({ dlqId: 'msg_anything' })).rejects.toThrow(/does not serve/);
  });

  it('resume keeps the steps that ran and goes on from the failed one; restart runs every step again; both leave the DLQ', async () => {
    const runner = await startTestRunner();
    const env = upstashEnv(runner);
    const ran: Record<string, number> = {};
    let healed = false;
    const hit = (step: string): number => (ran[step] = (ran[step] ?? 0) + 1);
    const app = await startUpstashApp(
      runner,
      {
        mending: {
          route: async (context) => {
            const first = await context.run('first', async () => (hit('first'), `ran ${ran.first}`));
            return context.run('second', async () => {
              hit('second');
              if (!healed) throw new Error('not yet');
              return `${first}, then second`;
            });
          },
        },
      },
      env,
    );
    apps.push(app);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const failedRun = async (): Promise<string> => {
      const { workflowRunId } = await client.trigger({ url: `${app.url}/mending`, body: {}, retries: 0 });
      expect((await waitForFinish(runner.runner, workflowRunId, 15_000)).run.status).toBe('failed');
      // The letter is settled just after the run's end.
      for (let tries = 0; tries < 200; tries++) {
        const [letter] = (await client.dlq.list({ filter: { workflowRunId } })).messages;
        if (letter) return letter.dlqId;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`No DLQ entry for ${workflowRunId} within 10 s.`);
    };

    const toResume = await failedRun();
    expect(ran).toEqual({ first: 1, second: 1 });
    healed = true;
    const resumed = await client.dlq.resume({
      dlqId: toResume,
      retries: 2,
      flowControl: { key: 'mend', parallelism: 1 },
    });
    expect(resumed.workflowRunId).toMatch(/^wfr_/);
    expect(typeof resumed.workflowCreatedAt).toBe('number');
    const view = await waitForFinish(runner.runner, resumed.workflowRunId, 15_000);
    expect(view.run.status).toBe('completed');
    // `first` was kept (not run again, its result the old run's); `second` ran on.
    expect(ran).toEqual({ first: 1, second: 2 });
    expect(view.run.output).toContain('ran 1, then second');
    expect(view.run.retries).toBe(2);
    expect(view.steps.filter((step) => step.name === 'first').map((step) => step.status)).toEqual(['succeeded']);
    // The letter is gone: listed no more, and a second resume is refused.
    expect((await client.dlq.list()).messages).toEqual([]);
    await expect(client.dlq.resume(toResume)).rejects.toThrow(/No DLQ message/);

    healed = false;
    const toRestart = await failedRun();
    healed = true;
    const {
      workflowRuns: [restarted],
    } = await client.dlq.restart([toRestart]);
    expect((await waitForFinish(runner.runner, restarted!.workflowRunId, 15_000)).run.status).toBe('completed');
    // From the start: `first` ran again (3: the failed run's and the restarted one's).
    expect(ran.first).toBe(3);
    expect((await client.dlq.list()).messages).toEqual([]);

    // The same resume sent twice at once starts one run, never two (the other may find the letter gone).
    healed = false;
    const raced = await failedRun();
    healed = true;
    const settled = await Promise.allSettled([
      client.dlq.resume({ dlqId: raced }),
      client.dlq.resume({ dlqId: raced }),
    ]);
    const ids = new Set(
      settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value.workflowRunId] : [])),
    );
    expect(ids.size).toBe(1);
    expect((await waitForFinish(runner.runner, [...ids][0]!, 15_000)).run.status).toBe('completed');

    // QStash's REST form: one id in the path, the new run's id named by Upstash-Workflow-RunId.
    healed = false;
    const named = await failedRun();
    healed = true;
    const restart = (): Promise<Response> =>
      fetch(`${env.QSTASH_URL}/v2/workflows/dlq/restart/${named}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.QSTASH_TOKEN}`, 'upstash-workflow-runid': 'wfr_named-restart' },
      });
    const answer = await restart();
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({
      workflowRunId: 'wfr_named-restart',
      workflowCreatedAt: expect.any(Number),
    });
    expect((await waitForFinish(runner.runner, 'wfr_named-restart', 15_000)).run.status).toBe('completed');
    expect((await restart()).status).toBe(404);

    // Bulk, by filter: every failed run of the URL, one new run each.
    healed = false;
    const bulk = [await failedRun(), await failedRun()];
    healed = true;
    const all = await client.dlq.resume({ filter: { workflowUrl: `${app.url}/mending` } });
    expect(all.workflowRuns).toHaveLength(bulk.length);
    for (const { workflowRunId } of all.workflowRuns)
      expect((await waitForFinish(runner.runner, workflowRunId, 15_000)).run.status).toBe('completed');
    expect((await client.dlq.list()).messages).toEqual([]);
  });
});
