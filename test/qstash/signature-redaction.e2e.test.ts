import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@upstash/workflow';
import { NonRetryableError } from '../../protocol/errors.js';
import { ALERT_SIGNATURE_HEADER } from '../../runner-core/alerts/signature.js';
import { closeStarted, startApp, startTestRunner, startThroughApp, waitForFinish, type TestRunner } from '../helpers/runner.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { startUpstashApp, upstashEnv } from './upstash-app.js';

/**
 * Finding 3 of issue 19: a delivery's `Upstash-Signature` (a JWT valid for minutes) was stored and
 * served in clear, so anyone who could read a run could replay it at the app. Every signature the
 * runner sends (Upstash deliveries, native drives, alerts) is redacted before it is recorded: the
 * attempts the API serves hold `[redacted]`, and no value the receivers got appears anywhere in them.
 */

/** The Upstash app and the webhook receiver a test started, closed after the runners. */
const closers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await closeStarted();
  for (const started of closers.splice(0)) await started.close();
});

/** The run as `GET /v1/runs/:id` serves it (with the token), as text and parsed. */
async function servedRun(runner: TestRunner, id: string): Promise<{ text: string; attempts: { requestHeaders: Record<string, string>; outcome: string }[] }> {
  const response = await fetch(`${runner.url}/v1/runs/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${runner.token}` } });
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, attempts: (JSON.parse(text) as { attempts: never[] }).attempts };
}

describe('signatures the runner sends are never recorded', () => {
  it("an Upstash run's attempts hold neither the deliveries' JWTs nor the alert's signature", async () => {
    const hook = await startWebhookReceiver();
    closers.push(hook);
    const runner = await startTestRunner({ runner: { alerts: { webhookUrl: hook.url } } });
    const received: string[] = [];
    const app = await startUpstashApp(
      runner,
      {
        signed: {
          route: async (context) => {
            await context.run('first', async () => 'one');
            await context.run('second', async () => {
              throw new Error('fails so that an alert goes out too');
            });
          },
        },
      },
      upstashEnv(runner),
      (hono) =>
        hono.use('*', async (c, next) => {
          const signature = c.req.header('upstash-signature');
          if (signature) received.push(signature);
          await next();
        }),
    );
    closers.push(app);
    const env = upstashEnv(runner);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId: id } = await client.trigger({ url: `${app.url}/signed`, body: {}, retries: 0 });
    const { run } = await waitForFinish(runner.runner, id, 20_000);
    expect(run).toMatchObject({ status: 'failed', alert: 'delivered' });

    const { text, attempts } = await servedRun(runner, id);
    expect(received.length).toBeGreaterThan(1);
    for (const jwt of received) expect(text).not.toContain(jwt);
    expect(text).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/);
    const deliveries = attempts.filter((a) => 'upstash-signature' in a.requestHeaders);
    expect(deliveries.length).toBeGreaterThan(1);
    for (const attempt of deliveries) expect(attempt.requestHeaders['upstash-signature']).toBe('[redacted]');

    const alertSignature = hook.received[0]?.headers[ALERT_SIGNATURE_HEADER];
    expect(alertSignature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(text).not.toContain(String(alertSignature).split('v1=')[1]);
    const alert = attempts.find((a) => a.outcome.startsWith('alert'));
    expect(alert?.requestHeaders[ALERT_SIGNATURE_HEADER]).toBe('[redacted]');
  });

  it("a native run's attempts hold no wf-signature the app received", async () => {
    const runner = await startTestRunner();
    const received: string[] = [];
    const app = await startApp(
      async (context) => {
        await context.run('only', () => 'value');
        await context.run('stop', () => {
          throw new NonRetryableError('done');
        });
      },
      {
        token: runner.token,
        runnerUrl: runner.url,
        wrap: (handler) => (req, res) => {
          const signature = req.headers['wf-signature'];
          if (typeof signature === 'string') received.push(...signature.split(' ').map((s) => s.replace(/^v1,/, '')));
          handler(req, res);
        },
      },
    );
    const id = await startThroughApp(app.url, { a: 1 });
    await waitForFinish(runner.runner, id);
    const { text, attempts } = await servedRun(runner, id);
    await vi.waitFor(() => expect(received.length).toBeGreaterThan(0));
    for (const signature of received) expect(text).not.toContain(signature);
    const drives = attempts.filter((a) => 'wf-signature' in a.requestHeaders);
    expect(drives.length).toBeGreaterThan(0);
    for (const attempt of drives) expect(attempt.requestHeaders['wf-signature']).toBe('[redacted]');
  });
});
