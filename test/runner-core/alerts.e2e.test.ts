import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { NonRetryableError } from '../../protocol/errors.js';
import { verifyAlertSignature } from '../../runner-core/alerts/signature.js';
import type { RunnerOptions } from '../../runner-core/runner.js';
import type { Workflow } from '../../serve/core/handler.js';
import {
  closeStarted,
  startApp,
  startTestRunner,
  startThroughApp,
  TEST_TOKEN,
  unusedPort,
  waitForRun,
  type TestRunner,
} from '../helpers/runner.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Failure alerts end to end: a real runner (SQLite file, HTTP API), the real `serve` handler, and a
 * loopback webhook receiver. A failed run is alerted once (its step retries and its failureFunction
 * call included; the call and the alert are independent, see alert-independence.ts), delivery outlasts a receiver that refuses or is down and a runner restart, the
 * signature verifies, and a completed run never alerts.
 */

afterEach(closeStarted);
const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

const PUBLIC_URL = 'https://wf.example.com';
// Fast retries for the alert (and any outage): 20 ms, at most 100 ms apart.
const FAST: Partial<RunnerOptions> = { unreachable: { baseMs: 20, capMs: 100 } };

async function receiver(port?: number): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(port);
  receivers.push(r);
  return r;
}

async function world(
  workflow: Workflow<any, any>,
  hookUrl: string,
  options: { runner?: Partial<RunnerOptions>; dbPath?: string; failureFunction?: () => Promise<void> } = {},
) {
  const runner = await startTestRunner({
    ...(options.dbPath !== undefined && { dbPath: options.dbPath }),
    runner: { ...FAST, alerts: { webhookUrl: hookUrl, publicUrl: PUBLIC_URL }, ...options.runner },
  });
  const app = await startApp(workflow, {
    token: TEST_TOKEN,
    runnerUrl: runner.url,
    retryDelay: 5,
    retries: 2,
    ...(options.failureFunction && { failureFunction: options.failureFunction }),
  });
  return { runner, app };
}

const failing: Workflow<any, any> = async (context) => {
  await context.run('reserve', () => 'ok');
  await context.run('charge', () => {
    throw new Error('card declined');
  });
};

/** Waits for the run's alert to settle (delivered or given up). */
function alertSettled(runner: TestRunner, id: string) {
  return waitForRun(runner.runner, id, (r) => r.alert === 'delivered' || r.alert === 'failed');
}

describe('failure alerts', () => {
  it('a failed run is alerted exactly once, after its retries, with a signed document naming the failed step', async () => {
    const hook = await receiver();
    const { runner, app } = await world(failing, hook.url);
    const id = await startThroughApp(app.url, { order: 7 });
    const run = await alertSettled(runner, id);
    expect(run).toMatchObject({ status: 'failed', alert: 'delivered', alertAttempts: 1 });
    // Nothing more comes: the run is not claimable any more (a bounded look, the poll is 1 s).
    await sleep(300);
    expect(hook.received).toHaveLength(1);
    const [hit] = hook.received;
    const document = JSON.parse(hit!.body);
    expect(document).toMatchObject({
      type: 'run.failed',
      id: `${id}.${run.finishedAt}`,
      runId: id,
      url: app.url,
      status: 'failed',
      error: { name: 'Error', message: 'card declined' },
      failedStep: { index: 1, name: 'charge', kind: 'run' },
      // 3 executions of "charge" (2 retries), then the run's last drive that failed it.
      attempts: run.attempts - 1,
      dashboardUrl: `${PUBLIC_URL}/runs/${id}`,
      failedAt: new Date(run.finishedAt!).toISOString(),
    });
    expect(document.text).toBe(
      `wfkit run ${id} failed at step "charge" (#1): Error: card declined\n${PUBLIC_URL}/runs/${id}`,
    );
    expect(hit!.headers['content-type']).toBe('application/json');
    expect(hit!.headers['wf-alert-id']).toBe(document.id);
    // Signed with the runner's token (no secret set): verifies, and a changed body does not.
    const signature = hit!.headers['wf-alert-signature'] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyAlertSignature(hit!.body, signature, TEST_TOKEN)).toBe(true);
    expect(verifyAlertSignature(hit!.body.replace('card', 'cart'), signature, TEST_TOKEN)).toBe(false);
    expect(verifyAlertSignature(hit!.body, signature, 'another-secret-0123456789')).toBe(false);
    // The delivery is the run's last attempt, the webhook's path hidden.
    const attempts = await runner.store.listAttempts(id);
    expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'failed', 'failed', 'failed', 'alert delivered']);
    expect(attempts.at(-1)).toMatchObject({
      requestUrl: `http://127.0.0.1:${hook.port}/…`,
      responseStatus: 200,
      responseBody: 'ok',
      error: null,
    });
  });

  it('a completed run never alerts', async () => {
    const hook = await receiver();
    const { runner, app } = await world(async (context) => context.run('fine', () => 1), hook.url);
    const id = await startThroughApp(app.url);
    const run = await waitForRun(runner.runner, id, (r) => r.status === 'completed');
    await sleep(200);
    expect(hook.received).toHaveLength(0);
    expect(run).toMatchObject({ alert: null, alertAttempts: 0 });
    expect((await runner.store.listAttempts(id)).map((a) => a.outcome)).toEqual(['done']);
  });

  it('signs with WF_ALERT_SECRET when one is set', async () => {
    const hook = await receiver();
    const secret = 'alert-secret-0123456789abcdef';
    const { runner, app } = await world(failing, hook.url, { runner: { alerts: { webhookUrl: hook.url, secret } } });
    const id = await startThroughApp(app.url);
    await alertSettled(runner, id);
    const [hit] = hook.received;
    expect(verifyAlertSignature(hit!.body, hit!.headers['wf-alert-signature'] as string, secret)).toBe(true);
    expect(verifyAlertSignature(hit!.body, hit!.headers['wf-alert-signature'] as string, TEST_TOKEN)).toBe(false);
    // Without a public URL (a Runner made directly), the text links the route instead.
    expect(JSON.parse(hit!.body)).toMatchObject({ dashboardUrl: null });
  });

  it('the alert and the failureFunction call are each delivered once, neither waiting for the other', async () => {
    const hook = await receiver();
    let calls = 0;
    const { runner, app } = await world(
      async (context) => {
        await context.run('boom', () => {
          throw new NonRetryableError('boom');
        });
      },
      hook.url,
      { failureFunction: async () => void calls++ },
    );
    const id = await startThroughApp(app.url);
    const run = await waitForRun(runner.runner, id, (r) => r.failureCall === 'delivered' && r.alert === 'delivered');
    expect(run).toMatchObject({ alertAttempts: 1, failureCallAttempts: 1, attempts: 4 });
    expect(calls).toBe(1);
    expect(hook.received).toHaveLength(1);
    // Two drives, then the two deliveries (in whichever order they finished), each numbered apart.
    const attempts = await runner.store.listAttempts(id);
    expect(attempts.map((a) => a.seq)).toEqual([1, 2, 3, 4]);
    expect(attempts.slice(0, 2).map((a) => a.outcome)).toEqual(['failed', 'failed']);
    expect(
      attempts
        .slice(2)
        .map((a) => a.outcome)
        .sort(),
    ).toEqual(['alert delivered', 'failure-function done']);
  });

  it('a receiver that refuses (503, a redirect) is tried again until it takes the alert, one document for all tries', async () => {
    const hook = await receiver();
    hook.answer = (n) =>
      n === 1
        ? { status: 503 }
        : n === 2
          ? { status: 302, headers: { location: 'https://elsewhere.example/hook' } }
          : { status: 200 };
    const { runner, app } = await world(failing, hook.url);
    const id = await startThroughApp(app.url);
    const run = await alertSettled(runner, id);
    expect(run).toMatchObject({ alert: 'delivered', alertAttempts: 3 });
    await sleep(200);
    expect(hook.received.map((r) => r.status)).toEqual([503, 302, 200]);
    // The same document (and id) each time; only the signature's timestamp may differ.
    expect(new Set(hook.received.map((r) => r.body)).size).toBe(1);
    expect(new Set(hook.received.map((r) => r.headers['wf-alert-id'])).size).toBe(1);
    const alerts = (await runner.store.listAttempts(id)).filter((a) => a.outcome.startsWith('alert'));
    expect(alerts.map((a) => [a.outcome, a.responseStatus])).toEqual([
      ['alert error', 503],
      ['alert error', 302],
      ['alert delivered', 200],
    ]);
    expect(alerts[0]!.error).toMatchObject({
      code: 'ALERT_NOT_DELIVERED',
      message: expect.stringContaining('answered 503'),
    });
    expect(alerts[1]!.error!.message).toContain(
      'redirected to https://elsewhere.example/hook; redirects are not followed',
    );
  });

  it('a receiver that answers 2xx and then drops the connection mid-body has the alert: the status decides', async () => {
    const hook = await receiver();
    hook.answer = () => ({ status: 200, cut: true });
    const { runner, app } = await world(failing, hook.url);
    const id = await startThroughApp(app.url);
    const run = await alertSettled(runner, id);
    expect(run).toMatchObject({ alert: 'delivered', alertAttempts: 1 });
    const last = (await runner.store.listAttempts(id)).at(-1)!;
    expect(last).toMatchObject({ outcome: 'alert delivered', responseStatus: 200 });
    expect(last.responseBody).toContain('[the answer broke off]');
  });

  it('a receiver that is down for a while gets the alert once it is back', async () => {
    const hook = await receiver();
    await hook.close();
    const { runner, app } = await world(failing, hook.url);
    const id = await startThroughApp(app.url);
    // Refused connections, tried again and again while the alert stays pending.
    const waiting = await waitForRun(runner.runner, id, (r) => (r.alertAttempts ?? 0) >= 3);
    expect(waiting).toMatchObject({ status: 'failed', alert: 'pending' });
    const refused = (await runner.store.listAttempts(id)).filter((a) => a.outcome === 'alert error');
    expect(refused[0]!.error!.message).toContain('did not answer');
    await hook.listenAgain();
    await alertSettled(runner, id);
    await sleep(200);
    expect(hook.received).toHaveLength(1);
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({ runId: id });
  });

  it('an alert still pending when the runner stops is delivered by the next runner on the same store', async () => {
    const port = await unusedPort();
    const hookUrl = `http://127.0.0.1:${port}/hook`;
    const first = await world(failing, hookUrl);
    const id = await startThroughApp(first.app.url);
    await waitForRun(first.runner.runner, id, (r) => r.alert === 'pending' && (r.alertAttempts ?? 0) >= 1);
    const { dbPath } = first.runner;
    // The runner goes (its file stays: a dbPath given is not removed), then the receiver comes up.
    await first.runner.runner.stop(0);
    await first.runner.server.close();
    const hook = await receiver(port);
    const second = await startTestRunner({ dbPath, runner: { ...FAST, alerts: { webhookUrl: hookUrl } } });
    const run = await alertSettled(second, id);
    expect(run.alert).toBe('delivered');
    expect(hook.received).toHaveLength(1);
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({ runId: id, failedStep: { name: 'charge' } });
  });

  it('a runner without a webhook gives a pending alert up, and says why in the log', async () => {
    const port = await unusedPort();
    const first = await world(failing, `http://127.0.0.1:${port}/hook`);
    const id = await startThroughApp(first.app.url);
    await waitForRun(first.runner.runner, id, (r) => r.alert === 'pending' && (r.alertAttempts ?? 0) >= 1);
    await first.runner.runner.stop(0);
    const second = await startTestRunner({ dbPath: first.runner.dbPath, runner: FAST });
    const run = await alertSettled(second, id);
    expect(run.alert).toBe('failed');
    const last = (await second.store.listAttempts(id)).at(-1)!;
    expect(last).toMatchObject({ outcome: 'alert failed', error: { name: 'AlertNotConfiguredError' } });
  });

  it('gives up once the unreachable horizon has passed since the run failed', async () => {
    const port = await unusedPort();
    const { runner, app } = await world(failing, `http://127.0.0.1:${port}/hook`, {
      runner: { unreachable: { baseMs: 20, capMs: 50, horizonMs: 300 } },
    });
    const id = await startThroughApp(app.url);
    const run = await alertSettled(runner, id);
    expect(run.alert).toBe('failed');
    expect(run.alertAttempts).toBeGreaterThan(1);
  });

  it('an app that is down: the run fails at the horizon and is alerted at once, while its failureFunction call waits out the app', async () => {
    const hook = await receiver();
    const { runner } = await world(failing, hook.url, {
      runner: { unreachable: { baseMs: 20, capMs: 50, horizonMs: 400 } },
    });
    const { run: started } = await runner.runner.startRun({
      url: `http://127.0.0.1:${await unusedPort()}/workflow`,
      body: '{}',
      headers: {},
    });
    const run = await alertSettled(runner, started.id);
    expect(run).toMatchObject({ status: 'failed', alert: 'delivered', error: { code: 'APP_UNREACHABLE' } });
    // Never answered, so a failureFunction call is owed too: on the app's schedule, not the alert's.
    expect(run.failureCall).not.toBeNull();
    expect(JSON.parse(hook.received[0]!.body)).toMatchObject({
      runId: started.id,
      failedStep: null,
      error: { code: 'APP_UNREACHABLE' },
    });
    expect((await runner.store.listAttempts(started.id)).filter((a) => a.outcome === 'alert delivered')).toHaveLength(
      1,
    );
  });

  it('a run that a cancel kept cancelled while its failing drive settled is not alerted', async () => {
    const hook = await receiver();
    const { runner } = await world(failing, hook.url);
    // The state that race leaves (injected through the store): cancelled, yet an alert owed and due.
    const { run } = await runner.runner.startRun({
      url: `http://127.0.0.1:${await unusedPort()}/workflow`,
      body: '{}',
      headers: {},
      delayMs: 60_000,
    });
    const now = Date.now();
    await runner.store.apply([
      {
        type: 'run',
        runId: run.id,
        at: now,
        patch: { status: 'cancelled', finishedAt: now, alert: 'pending', alertAttempts: 0, nextAt: now },
      },
    ]);
    const settled = await waitForRun(runner.runner, run.id, (r) => r.alert !== 'pending');
    expect(settled).toMatchObject({ status: 'cancelled', alert: null });
    expect(hook.received).toHaveLength(0);
  });

  it('a rerun is a new run with its own alert; a resumed run that fails again owes a new one', async () => {
    const hook = await receiver();
    const { runner, app } = await world(failing, hook.url);
    const id = await startThroughApp(app.url);
    await alertSettled(runner, id);
    const rerun = await runner.runner.rerun(id);
    await alertSettled(runner, rerun.id);
    await runner.runner.resumeRun(id);
    const resumed = await waitForRun(runner.runner, id, (r) => r.status === 'failed' && r.alert === 'delivered');
    await sleep(200);
    const documents = hook.accepted();
    expect(documents.map((d) => d.runId)).toEqual([id, rerun.id, id]);
    // The resumed run's second failure has an id of its own (a receiver dedupes by id).
    expect(documents[2].id).toBe(`${id}.${resumed.finishedAt}`);
    expect(documents[2].id).not.toBe(documents[0].id);
  });
});
