import { afterEach, describe, expect, it, vi } from 'vitest';
import { NonRetryableError } from '../../protocol/errors.js';
import { closeStarted, startApp, startTestRunner, startThroughApp, waitForFinish } from '../helpers/runner.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { expectUpstashSignaturesUnrecorded, servedRun } from './signature-scenario.js';

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

describe('signatures the runner sends are never recorded', () => {
  it("an Upstash run's attempts hold neither the deliveries' JWTs nor the alert's signature", async () => {
    const hook = await startWebhookReceiver();
    closers.push(hook);
    const runner = await startTestRunner({ runner: { alerts: { webhookUrl: hook.url } } });
    await expectUpstashSignaturesUnrecorded(runner, runner, hook, (app) => closers.push(app));
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
