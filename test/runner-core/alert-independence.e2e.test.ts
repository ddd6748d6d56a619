import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeStarted, startApp, startTestRunner, startThroughApp, waitForRun } from '../helpers/runner.js';
import { NonRetryableError } from '../../protocol/errors.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import {
  failureCallNotHeldByHangingWebhook,
  failureCallNotHeldByRefusingWebhook,
  type IndependenceWorld,
} from './alert-independence.js';

/**
 * A failed run's failureFunction call and its alert are independent deliveries (issue 19, finding 5),
 * on SQLite: a real runner, a real app with a failureFunction, a loopback webhook that refuses or hangs.
 */

afterEach(closeStarted);
const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

async function world(capMs = 100) {
  const hook = await startWebhookReceiver();
  receivers.push(hook);
  // The default horizon (24 h): the alert never gives up during the test.
  const runner = await startTestRunner({
    runner: { unreachable: { baseMs: 20, capMs }, alerts: { webhookUrl: hook.url } },
  });
  return {
    hook,
    runner,
    world: {
      runnerUrl: runner.url,
      token: runner.token,
      getRun: (id: string) => runner.store.getRun(id),
      listAttempts: (id: string) => runner.store.listAttempts(id),
    } satisfies IndependenceWorld,
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

  it('while neither delivery is due, the run is let go (no drive waits for a later try)', async () => {
    const { hook, runner } = await world(60_000);
    // The alert and the failureFunction call are both told to come back in 30 s.
    hook.answer = () => ({ status: 429, headers: { 'retry-after': '30' } });
    let failed = false;
    const app = await startApp(
      // Fails outside any step: the run fails in this one drive.
      async () => {
        failed = true;
        throw new NonRetryableError('card declined');
      },
      {
        token: runner.token,
        runnerUrl: runner.url,
        retries: 2,
        failureFunction: async () => {},
        // Once the run failed, every request is its failureFunction call.
        wrap: (handler) => (req, res) =>
          failed ? void res.writeHead(429, { 'retry-after': '30' }).end() : handler(req, res),
      },
    );
    const id = await startThroughApp(app.url);
    const tried = await waitForRun(
      runner.runner,
      id,
      (r) => r.failureCallAttempts >= 1 && (r.alertAttempts ?? 0) >= 1,
      20_000,
    );
    expect(tried).toMatchObject({ status: 'failed', failureCall: 'pending', alert: 'pending' });
    // Both owed, neither due for 30 s: no drive holds the run meanwhile, and it is due when the earlier one is.
    await vi.waitFor(() => expect(runner.runner.drivesInFlight).toBe(0), { timeout: 10_000 });
    const idle = (await runner.store.getRun(id))!;
    expect(idle.nextAt).toBe(Math.min(idle.failureCallNextAt!, idle.alertNextAt!));
    expect(idle.alertNextAt! - idle.finishedAt!).toBeGreaterThanOrEqual(29_000);
  });
});
