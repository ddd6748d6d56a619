import { expect } from 'vitest';
import { Client } from '@upstash/workflow';
import { ALERT_SIGNATURE_HEADER } from '../../runner-core/alerts/signature.js';
import { waitForFinish, type TestRunner } from '../helpers/runner.js';
import type { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { startUpstashApp, upstashEnv } from './upstash-app.js';

/**
 * Finding 3 of issue 19, as a scenario both stores run: an Upstash run through the real SDK whose
 * second step fails (so an alert goes out too); the signatures the app and the webhook received
 * appear nowhere in the run `reader` serves (`GET /v1/runs/:id`), and the attempts show them
 * `[redacted]`.
 */

/** The run as `GET /v1/runs/:id` serves it (with the token), as text and parsed. */
export async function servedRun(
  runner: Pick<TestRunner, 'url' | 'token'>,
  id: string,
): Promise<{ text: string; attempts: { requestHeaders: Record<string, string>; outcome: string }[] }> {
  const response = await fetch(`${runner.url}/v1/runs/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${runner.token}` },
  });
  expect(response.status).toBe(200);
  const text = await response.text();
  return { text, attempts: (JSON.parse(text) as { attempts: never[] }).attempts };
}

export async function expectUpstashSignaturesUnrecorded(
  runner: TestRunner,
  reader: Pick<TestRunner, 'url' | 'token'>,
  hook: WebhookReceiver,
  /** Takes the app as soon as it listens, for the suite to close whatever happens. */
  track: (app: { close(): Promise<void> }) => void,
): Promise<void> {
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
  track(app);
  const env = upstashEnv(runner);
  const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
  const { workflowRunId: id } = await client.trigger({ url: `${app.url}/signed`, body: {}, retries: 0 });
  const { run } = await waitForFinish(runner.runner, id, 30_000);
  expect(run).toMatchObject({ status: 'failed', alert: 'delivered' });

  const { text, attempts } = await servedRun(reader, id);
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
}
