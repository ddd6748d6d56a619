import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '@upstash/workflow';
import { waitForFinish, type TestRunner } from '../helpers/runner.js';
import { postgresApiRunners } from './postgres-runners.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/**
 * Failure alerts for Upstash-protocol runs on PostgreSQL, two runners with the same webhook: a
 * failed run is alerted once by whichever runner claims it, its failure callback reaches the app
 * once, and every attempt keeps its own number though the alert and the callback are in flight
 * together.
 */

const TOKEN = 'wf_qstash_pg_alert_token_0123456789';

let hook: WebhookReceiver | undefined;
let app: UpstashApp | undefined;

beforeAll(async () => {
  hook = await startWebhookReceiver();
  // Answers late: the failure callback is delivered (and logged) while the alert waits for it.
  hook.answer = () => ({ status: 200, delayMs: 1_000 });
});

const { runners } = postgresApiRunners({
  database: 'qstash_alerts',
  token: TOKEN,
  runner: () => ({
    unreachable: { baseMs: 20, capMs: 100 },
    alerts: { webhookUrl: hook!.url, publicUrl: 'https://wf.example.com' },
  }),
});

afterAll(async () => {
  await app?.close();
  await hook?.close();
});

describe('QStash engine on PostgreSQL: failure alerts', () => {
  it('a failed Upstash run is alerted once, its failure callback delivered once, every attempt numbered apart', async () => {
    const first = runners[0]!;
    let failureCalls = 0;
    const asTest = { runner: first.runner, url: first.url, token: TOKEN } as TestRunner;
    app = await startUpstashApp(asTest, {
      failing: {
        route: async (context) => {
          await context.run('charge', async () => {
            throw new Error('card declined');
          });
        },
        options: {
          failureFunction: async () => {
            await sleep(300);
            failureCalls++;
          },
        },
      },
    });
    const env = upstashEnv(asTest);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId: id } = await client.trigger({ url: `${app.url}/failing`, body: {}, retries: 0 });
    await waitForFinish(first.runner, id, 30_000);
    await vi.waitFor(
      async () =>
        expect(await first.runner.store.getRun(id)).toMatchObject({
          alert: 'delivered',
          failureCall: 'delivered',
          nextAt: null,
        }),
      { timeout: 10_000 },
    );
    await sleep(500);
    expect(hook!.received).toHaveLength(1);
    expect(JSON.parse(hook!.received[0]!.body)).toMatchObject({ type: 'run.failed', runId: id });
    expect(failureCalls).toBe(1);
    const attempts = await first.runner.store.listAttempts(id);
    expect(attempts.map((a) => a.outcome).sort()).toEqual(['alert delivered', 'failed', 'failure-function done']);
    expect(new Set(attempts.map((a) => a.seq)).size).toBe(3);
    expect((await first.runner.store.getRun(id))!.attempts).toBe(3);
  });
});
