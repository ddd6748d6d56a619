import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@upstash/workflow';
import type { Tracing } from '../../runner-core/tracing.js';
import type { Run } from '../../runner-core/store/types.js';
import { closeStarted, startTestRunner, waitForRun } from '../helpers/runner.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/**
 * Upstash-protocol runs end through run-end/ as native ones do (issue 19): completed by the SDK's
 * DELETE, cancelled by `Client.cancel` and by `wf cancel` (the actions), failed when a message fails
 * for good. Each end is followed up once by the one authority (seen here through `Tracing.runEnded`,
 * which only `RunEnds` calls), and a failed run's alert stays independent of its failure callback:
 * a webhook answering 404 does not hold the callback back.
 */

const apps: UpstashApp[] = [];
const receivers: WebhookReceiver[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps.splice(0)) await app.close();
  for (const r of receivers.splice(0)) await r.close();
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

describe('QStash engine: run ends through run-end', () => {
  it('completed by the SDK, cancelled by Client.cancel and by wf cancel, failed for good: each end followed up once', async () => {
    const hook = await startWebhookReceiver();
    receivers.push(hook);
    hook.answer = () => ({ status: 404 });
    const { tracing, ended } = endsTracer();
    const runner = await startTestRunner({ runner: { tracing, unreachable: { baseMs: 20, capMs: 100 }, alerts: { webhookUrl: hook.url } } });
    let failureCalls = 0;
    const app = await startUpstashApp(runner, {
      done: { route: async (context) => context.run('only', async () => 'fine') },
      // Waits for an event nobody sends: stays running until cancelled.
      waiting: { route: async (context) => void (await context.waitForEvent('never', 'never-sent', { timeout: '1h' })) },
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
    const trigger = async (name: string, retries?: number) => (await client.trigger({ url: `${app.url}/${name}`, body: {}, ...(retries !== undefined && { retries }) })).workflowRunId;

    const completed = await trigger('done');
    const byClient = await trigger('waiting');
    const byWf = await trigger('waiting');
    const failed = await trigger('failing', 0);
    await waitForRun(runner.runner, completed, (r) => r.status === 'completed', 20_000);
    for (const id of [byClient, byWf]) await vi.waitFor(async () => expect((await runner.store.listSteps(id)).some((s) => s.kind === 'wait')).toBe(true), { timeout: 20_000 });
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
