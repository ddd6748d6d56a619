import { afterEach, describe, it } from 'vitest';
import { closeStarted, startTestRunner } from '../helpers/runner.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { failureCallNotHeldByHangingWebhook, failureCallNotHeldByRefusingWebhook, type IndependenceWorld } from './alert-independence.js';

/**
 * A failed run's failureFunction call and its alert are independent deliveries (issue 19, finding 5),
 * on SQLite: a real runner, a real app with a failureFunction, a loopback webhook that refuses or hangs.
 */

afterEach(closeStarted);
const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

async function world(): Promise<{ world: IndependenceWorld; hook: WebhookReceiver }> {
  const hook = await startWebhookReceiver();
  receivers.push(hook);
  // The default horizon (24 h): the alert never gives up during the test.
  const runner = await startTestRunner({ runner: { unreachable: { baseMs: 20, capMs: 100 }, alerts: { webhookUrl: hook.url } } });
  return {
    hook,
    world: { runnerUrl: runner.url, token: runner.token, getRun: (id) => runner.store.getRun(id), listAttempts: (id) => runner.store.listAttempts(id) },
  };
}

describe('failureFunction and alert are independent (SQLite)', () => {
  it('a webhook answering 404 does not hold the failureFunction back; the alert keeps being retried', async () => {
    const { world: w, hook } = await world();
    await failureCallNotHeldByRefusingWebhook(w, hook);
  });

  it('a webhook that hangs does not hold the failureFunction back', async () => {
    const { world: w, hook } = await world();
    await failureCallNotHeldByHangingWebhook(w, hook);
  });
});
