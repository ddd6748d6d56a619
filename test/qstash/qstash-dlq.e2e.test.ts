import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@upstash/workflow';
import { closeStarted, startTestRunner, waitForFinish } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/** `client.dlq.list` and `client.dlq.delete` of the real @upstash/workflow against a real runner (SQLite). */

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
    // Resume and restart are not served: refused, naming the endpoint, never a silent success.
    await expect(client.dlq.resume('msg_anything')).rejects.toThrow(/does not serve/);
  });
});
