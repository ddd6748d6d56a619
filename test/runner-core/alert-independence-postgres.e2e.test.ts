import { afterAll, beforeAll, describe, it } from 'vitest';
import { postgresApiRunners } from '../qstash/postgres-runners.js';
import { closeStarted } from '../helpers/runner.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import {
  failureCallNotHeldByHangingWebhook,
  failureCallNotHeldByRefusingWebhook,
  type IndependenceWorld,
} from './alert-independence.js';

/**
 * The failureFunction call and the alert are independent deliveries on PostgreSQL, with two runners
 * claiming (issue 19, finding 5): whichever runner claims the failed run, a webhook that refuses or
 * hangs never holds the failureFunction back.
 */

const TOKEN = 'wf_alert_independence_pg_token_0123';
let hook: WebhookReceiver | undefined;

beforeAll(async () => {
  hook = await startWebhookReceiver();
});

const { runners, stores } = postgresApiRunners({
  database: 'alert_independence',
  token: TOKEN,
  runner: () => ({ unreachable: { baseMs: 20, capMs: 100 }, alerts: { webhookUrl: hook!.url } }),
});

afterAll(async () => {
  await closeStarted();
  await hook?.close();
});

function world(): IndependenceWorld {
  const reader = stores[1]!;
  return {
    runnerUrl: runners[0]!.url,
    token: TOKEN,
    getRun: (id) => reader.getRun(id),
    listAttempts: (id) => reader.listAttempts(id),
  };
}

describe('failureFunction and alert are independent (PostgreSQL, two runners)', () => {
  it('a webhook answering 404 does not hold the failureFunction back; the alert keeps being retried', async () => {
    await failureCallNotHeldByRefusingWebhook(world(), hook!);
  });

  it('a webhook that hangs does not hold the failureFunction back', async () => {
    await failureCallNotHeldByHangingWebhook(world(), hook!);
  });
});
