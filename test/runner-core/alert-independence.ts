import { expect } from 'vitest';
import { NonRetryableError } from '../../protocol/errors.js';
import type { Run } from '../../runner-core/store/types.js';
import type { Workflow } from '../../serve/core/handler.js';
import { startApp, startThroughApp, waitForRun } from '../helpers/runner.js';
import type { WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * Finding 5 of issue 19, shared by the SQLite and PostgreSQL suites: a failed run's failureFunction
 * call and its alert are independent deliveries. An alert webhook that refuses (404) or hangs must
 * not hold the failureFunction back: it is delivered promptly while the alert keeps being retried.
 */

export interface IndependenceWorld {
  /** Where the app sends its starts (one runner's API). */
  runnerUrl: string;
  token: string;
  getRun(id: string): Promise<Run | undefined>;
  listAttempts(id: string): Promise<{ outcome: string }[]>;
}

const failing: Workflow<any, any> = async (context) => {
  await context.run('charge', () => {
    throw new NonRetryableError('card declined');
  });
};

async function failedRunWithFailureFunction(world: IndependenceWorld): Promise<{ id: string; calls: number[] }> {
  const calls: number[] = [];
  const app = await startApp(failing, {
    token: world.token,
    runnerUrl: world.runnerUrl,
    retries: 0,
    failureFunction: async () => void calls.push(Date.now()),
  });
  return { id: await startThroughApp(app.url), calls };
}

/** A webhook answering 404 for ever: the failureFunction is delivered, and the alert goes on being retried after it. */
export async function failureCallNotHeldByRefusingWebhook(
  world: IndependenceWorld,
  hook: WebhookReceiver,
): Promise<void> {
  hook.answer = () => ({ status: 404 });
  const { id, calls } = await failedRunWithFailureFunction(world);
  const store = { getRun: (runId: string) => world.getRun(runId) } as never;
  const delivered = await waitForRun(store, id, (r) => r.failureCall === 'delivered', 20_000);
  expect(calls).toHaveLength(1);
  // The alert did not get through, and still is owed: the failure call did not wait for it to give up.
  expect(delivered).toMatchObject({ status: 'failed', alert: 'pending' });
  const refusedSoFar = delivered.alertAttempts ?? 0;
  // It keeps being retried (on its own schedule) after the failure call is done.
  const later = await waitForRun(store, id, (r) => (r.alertAttempts ?? 0) >= refusedSoFar + 2, 20_000);
  expect(later).toMatchObject({ status: 'failed', alert: 'pending', failureCall: 'delivered', failureCallAttempts: 1 });
  expect(calls).toHaveLength(1);
  const outcomes = (await world.listAttempts(id)).map((a) => a.outcome);
  expect(outcomes.filter((o) => o.startsWith('failure-function'))).toEqual(['failure-function done']);
  expect(outcomes.filter((o) => o === 'alert error').length).toBeGreaterThanOrEqual(2);
}

/**
 * A webhook that never answers: the alert's first delivery hangs (until the alert's own timeout,
 * 10 s), and the failureFunction is delivered while it does.
 */
export async function failureCallNotHeldByHangingWebhook(
  world: IndependenceWorld,
  hook: WebhookReceiver,
): Promise<void> {
  hook.answer = () => ({ status: 200, delayMs: 120_000 });
  const { id, calls } = await failedRunWithFailureFunction(world);
  const store = { getRun: (runId: string) => world.getRun(runId) } as never;
  const delivered = await waitForRun(store, id, (r) => r.failureCall === 'delivered', 20_000);
  expect(calls).toHaveLength(1);
  // Delivered while the alert's first delivery was still waiting for its answer: none is logged yet.
  expect(hook.received.length).toBeGreaterThanOrEqual(1);
  expect(delivered).toMatchObject({ status: 'failed', alert: 'pending', alertAttempts: 0 });
  expect((await world.listAttempts(id)).map((a) => a.outcome).filter((o) => o.startsWith('alert'))).toEqual([]);
}
