import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@upstash/workflow';
import { decodeValue } from '../../protocol/values.js';
import { qstashToken } from '../../runner-core/qstash/qstash-token.js';
import { closeStarted, startTestRunner, waitForFinish } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/** The webhook endpoint's edges with the real @upstash/workflow: a body past the cap, a GET with a query. */

let apps: UpstashApp[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps) await app.close();
  apps = [];
});

describe('webhook URLs', () => {
  it('refuse a body past the cap with 413 and still serve the wait; a GET with a query reaches the workflow as sent', async () => {
    const runner = await startTestRunner({ api: { maxBodyBytes: 64 * 1024 } });
    const env: Record<string, string> = { ...upstashEnv(runner), QSTASH_TOKEN: qstashToken(runner.token) };
    const app = await startUpstashApp(
      runner,
      {
        hooked: {
          route: async (context) => {
            const hook = await context.createWebhook('hook');
            const got = await context.waitForWebhook('wait-hook', hook, '30s');
            return context.run('seen', async () => ({
              method: got.request?.method,
              url: got.request?.url,
              webhookUrl: hook.webhookUrl,
            }));
          },
        },
      },
      env,
    );
    apps.push(app);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/hooked`, body: {} });
    const webhookUrl = await vi.waitFor(
      async () => {
        const step = (await runner.store.listSteps(workflowRunId)).find((s) => s.name === 'hook' && s.output !== null);
        if (!step) throw new Error('no webhook yet');
        return (decodeValue(step.output!) as { webhookUrl: string }).webhookUrl;
      },
      { timeout: 10_000 },
    );

    const tooLarge = await fetch(webhookUrl, { method: 'POST', body: 'x'.repeat(200 * 1024) });
    expect(tooLarge.status).toBe(413);
    expect((await runner.store.getRun(workflowRunId))?.status).toBe('running');

    const called = await fetch(`${webhookUrl}?order=7`, { method: 'GET' });
    expect(called.status).toBe(200);
    const { run, steps } = await waitForFinish(runner.runner, workflowRunId, 15_000);
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    expect(decodeValue(steps.find((s) => s.name === 'seen')!.output!)).toEqual({
      method: 'GET',
      url: `${webhookUrl}?order=7`,
      webhookUrl,
    });
  });
});
