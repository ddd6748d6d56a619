import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@upstash/workflow';
import type { Tracing } from '../../runner-core/telemetry/tracing.js';
import type { Run } from '../../runner-core/store/types.js';
import { closeStarted, startTestRunner, waitForFinish, waitForRun } from '../helpers/runner.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/**
 * Failure alerts for Upstash-protocol runs: a real runner with an alert webhook (a loopback
 * receiver), a real @upstash/workflow app. The engine fails the run; the native driver alerts it
 * once, and leaves the failure callback (a QStash message) to the engine, which delivers it once.
 * Below: every Upstash run end goes through run-end/, as native ends do.
 */

const apps: UpstashApp[] = [];
const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps.splice(0)) await app.close();
  for (const r of receivers.splice(0)) await r.close();
});

const PUBLIC_URL = 'https://wf.example.com';

describe('QStash engine: failure alerts', () => {
  it('a failed Upstash run is alerted exactly once, and its failureFunction still runs once', async () => {
    const hook = await startWebhookReceiver();
    receivers.push(hook);
    const runner = await startTestRunner({
      runner: { unreachable: { baseMs: 20, capMs: 100 }, alerts: { webhookUrl: hook.url, publicUrl: PUBLIC_URL } },
    });
    let failureCalls = 0;
    const app = await startUpstashApp(runner, {
      failing: {
        route: async (context) => {
          await context.run('reserve', async () => 'ok');
          await context.run('charge', async () => {
            throw new Error('card declined');
          });
        },
        options: {
          // Slow on purpose: the alert is delivered while the failure callback is still pending,
          // the moment a native run's driver would go on to its own failureFunction call.
          failureFunction: async () => {
            await sleep(1_000);
            failureCalls++;
          },
        },
      },
    });
    apps.push(app);
    const env = upstashEnv(runner);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId: id } = await client.trigger({ url: `${app.url}/failing`, body: {}, retries: 0 });

    const { run } = await waitForFinish(runner.runner, id, 20_000);
    expect(run).toMatchObject({ status: 'failed', alert: 'delivered', alertAttempts: 1 });
    await waitForRun(runner.runner, id, (r) => r.failureCall === 'delivered', 10_000);
    await vi.waitFor(() => expect(failureCalls).toBe(1), { timeout: 10_000 });
    // The run is not claimable any more: nothing more reaches either receiver (a bounded look).
    await sleep(1_500);
    expect(failureCalls).toBe(1);
    expect(hook.received).toHaveLength(1);
    const document = JSON.parse(hook.received[0]!.body);
    expect(document).toMatchObject({
      type: 'run.failed',
      runId: id,
      url: `${app.url}/failing`,
      status: 'failed',
      error: { message: 'card declined' },
      // The SDK publishes a step only once it succeeded: a throwing step leaves no row to name.
      failedStep: null,
      dashboardUrl: `${PUBLIC_URL}/runs/${id}`,
    });
    const after = (await runner.store.getRun(id))!;
    expect(after).toMatchObject({ status: 'failed', alert: 'delivered', failureCall: 'delivered', nextAt: null });
    const outcomes = (await runner.store.listAttempts(id)).map((a) => a.outcome);
    expect(outcomes.filter((o) => o === 'alert delivered')).toHaveLength(1);
    expect(outcomes.filter((o) => o.startsWith('failure-function'))).toEqual(['failure-function done']);
  });

  it('a slow alert and a quick failure callback in flight together: each attempt keeps its own number', async () => {
    const hook = await startWebhookReceiver();
    receivers.push(hook);
    // The webhook answers late: the engine's failure callback (and its attempt) lands meanwhile.
    hook.answer = () => ({ status: 200, delayMs: 1_500 });
    const runner = await startTestRunner({
      runner: { unreachable: { baseMs: 20, capMs: 100 }, alerts: { webhookUrl: hook.url, publicUrl: PUBLIC_URL } },
    });
    let failureCalls = 0;
    const app = await startUpstashApp(runner, {
      failing: {
        route: async (context) => {
          await context.run('charge', async () => {
            throw new Error('card declined');
          });
        },
        options: {
          // Answers after the alert went out (the scheduler polls each second) and before the webhook answers it.
          failureFunction: async () => {
            await sleep(1_500);
            failureCalls++;
          },
        },
      },
    });
    apps.push(app);
    const env = upstashEnv(runner);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId: id } = await client.trigger({ url: `${app.url}/failing`, body: {}, retries: 0 });
    const { run, attempts } = await waitForFinish(runner.runner, id, 20_000);
    expect(run).toMatchObject({ status: 'failed', alert: 'delivered', alertAttempts: 1, failureCall: 'delivered' });
    await sleep(500);
    expect(hook.received).toHaveLength(1);
    expect(failureCalls).toBe(1);
    const seqs = attempts.map((a) => a.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(attempts.map((a) => a.outcome).sort()).toEqual(['alert delivered', 'failed', 'failure-function done']);
    // The run's count is the number of attempts logged: the alert took its number from the same counter.
    expect((await runner.store.getRun(id))!.attempts).toBe(3);
  });

  it('an Upstash run the native scheduler claims without an alert owed is put back, never sent a drive request', async () => {
    const runner = await startTestRunner({ runner: { pollMs: 50 } });
    const app = await startUpstashApp(runner, {
      waiting: {
        route: async (context) => {
          await context.run('first', async () => 1);
          await context.waitForEvent('approval', 'never-sent', { timeout: '1h' });
        },
      },
    });
    apps.push(app);
    const env = upstashEnv(runner);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId: id } = await client.trigger({ url: `${app.url}/waiting`, body: {} });
    await vi.waitFor(async () => expect((await runner.store.listSteps(id)).some((s) => s.kind === 'wait')).toBe(true), {
      timeout: 10_000,
    });
    // The delivery that registered the wait logs its attempt once the app answered it: after that, nothing moves.
    await vi.waitFor(async () => expect((await runner.store.listAttempts(id)).length).toBe(2), { timeout: 10_000 });
    const before = (await runner.store.getRun(id))!;
    const logged = (await runner.store.listAttempts(id)).length;
    // What no code path does today: make the run due for the native scheduler.
    await runner.store.apply([{ type: 'run', runId: id, patch: { nextAt: Date.now() }, at: Date.now() }]);
    await waitForRun(runner.runner, id, (r) => r.nextAt === null, 5_000);
    const after = (await runner.store.getRun(id))!;
    expect(after.status).toBe(before.status);
    expect(after.attempts).toBe(before.attempts);
    expect(await runner.store.listAttempts(id)).toHaveLength(logged);
  });

  it('a runner without a webhook owes no alert for a failed Upstash run', async () => {
    const runner = await startTestRunner();
    const app = await startUpstashApp(runner, {
      fatal: {
        route: async (context) => {
          await context.run('boom', async () => {
            throw new Error('nope');
          });
        },
      },
    });
    apps.push(app);
    const env = upstashEnv(runner);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId: id } = await client.trigger({ url: `${app.url}/fatal`, body: {}, retries: 0 });
    const { run, attempts } = await waitForFinish(runner.runner, id, 20_000);
    expect(run).toMatchObject({ status: 'failed', alert: null, nextAt: null });
    expect(attempts.some((a) => a.outcome.startsWith('alert'))).toBe(false);
  });
});

/** A tracer that only records which runs ended, with what status. */
function endsTracer(): { tracing: Tracing; ended: Map<string, string[]> } {
  const ended = new Map<string, string[]>();
  const tracing: Tracing = {
    attempt: () => ({ traceparent: '', step: () => {}, end: () => {} }),
    runEnded: (run: Run) => void ended.set(run.id, [...(ended.get(run.id) ?? []), run.status]),
    callTraceparent: () => '',
    shutdown: async () => {},
  };
  return { tracing, ended };
}

/**
 * Upstash-protocol runs end through run-end/ as native ones do (issue 19): completed by the SDK's
 * DELETE, cancelled by `Client.cancel` and by `wf cancel` (the actions), failed when a message fails
 * for good. Each end is followed up once by the one authority (seen here through `Tracing.runEnded`,
 * which only `RunEnds` calls), and a failed run's alert stays independent of its failure callback:
 * a webhook answering 404 does not hold the callback back.
 */
describe('QStash engine: run ends through run-end', () => {
  it('completed by the SDK, cancelled by Client.cancel and by wf cancel, failed for good: each end followed up once', async () => {
    const hook = await startWebhookReceiver();
    receivers.push(hook);
    hook.answer = () => ({ status: 404 });
    const { tracing, ended } = endsTracer();
    const runner = await startTestRunner({
      runner: { tracing, unreachable: { baseMs: 20, capMs: 100 }, alerts: { webhookUrl: hook.url } },
    });
    let failureCalls = 0;
    const app = await startUpstashApp(runner, {
      done: { route: async (context) => context.run('only', async () => 'fine') },
      // Waits for an event nobody sends: stays running until cancelled.
      waiting: {
        route: async (context) => void (await context.waitForEvent('never', 'never-sent', { timeout: '1h' })),
      },
      failing: {
        route: async (context) => {
          await context.run('charge', async () => {
            throw new Error('card declined');
          });
        },
        options: { failureFunction: async () => void failureCalls++ },
      },
    });
    apps.push(app);
    const env = upstashEnv(runner);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const trigger = async (name: string, retries?: number) =>
      (await client.trigger({ url: `${app.url}/${name}`, body: {}, ...(retries !== undefined && { retries }) }))
        .workflowRunId;

    const completed = await trigger('done');
    const byClient = await trigger('waiting');
    const byWf = await trigger('waiting');
    const failed = await trigger('failing', 0);
    await waitForRun(runner.runner, completed, (r) => r.status === 'completed', 20_000);
    for (const id of [byClient, byWf])
      await vi.waitFor(
        async () => expect((await runner.store.listSteps(id)).some((s) => s.kind === 'wait')).toBe(true),
        { timeout: 20_000 },
      );
    expect(await client.cancel({ ids: byClient })).toEqual({ cancelled: 1 });
    await runner.runner.cancelRun(byWf);

    // The failure callback reaches the app though every alert delivery is refused: the alert is still owed, and retried.
    const delivered = await waitForRun(runner.runner, failed, (r) => r.failureCall === 'delivered', 20_000);
    expect(delivered).toMatchObject({ status: 'failed', alert: 'pending' });
    expect(failureCalls).toBe(1);
    const refused = delivered.alertAttempts ?? 0;
    await waitForRun(runner.runner, failed, (r) => (r.alertAttempts ?? 0) >= refused + 2, 20_000);

    expect(ended.get(completed)).toEqual(['completed']);
    expect(ended.get(byClient)).toEqual(['cancelled']);
    expect(ended.get(byWf)).toEqual(['cancelled']);
    expect(ended.get(failed)).toEqual(['failed']);
    // A cancelled run's pending messages were dropped: the SDK's list is gone (404 for an ended run).
    expect(await runner.runner.qstash!.runSteps(byClient)).toBeUndefined();
  });
});
