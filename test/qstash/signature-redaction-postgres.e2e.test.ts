import { afterAll, beforeAll, describe, it } from 'vitest';
import type { TestRunner } from '../helpers/runner.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { postgresApiRunners } from './postgres-runners.js';
import { expectUpstashSignaturesUnrecorded } from './signature-scenario.js';

/**
 * Finding 3 of issue 19 on PostgreSQL, two runners sharing the database: whichever claims the
 * deliveries and the alert, the run the other one serves holds none of their signatures.
 */

const TOKEN = 'wf_qstash_pg_signature_token_0123456789';
let hook: WebhookReceiver | undefined;
let closeApp: (() => Promise<void>) | undefined;

beforeAll(async () => {
  hook = await startWebhookReceiver();
});

const { runners } = postgresApiRunners({
  database: 'qstash_signatures',
  token: TOKEN,
  runner: () => ({ alerts: { webhookUrl: hook!.url } }),
});

afterAll(async () => {
  await closeApp?.();
  await hook?.close();
});

describe('QStash engine on PostgreSQL: signatures are never recorded', () => {
  it("an Upstash run's attempts, read from the other runner, hold neither the JWTs nor the alert's signature", async () => {
    const [first, second] = runners;
    const asTest = { runner: first!.runner, url: first!.url, token: TOKEN } as TestRunner;
    await expectUpstashSignaturesUnrecorded(
      asTest,
      { url: second!.url, token: TOKEN },
      hook!,
      (app) => (closeApp = () => app.close()),
    );
  });
});
