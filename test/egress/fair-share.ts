import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@upstash/workflow';
import { expect, vi } from 'vitest';
import { Histogram, renderMetrics } from '../../runner-core/telemetry/metrics.js';
import type { Runner } from '../../runner-core/runner.js';
import { closeServer, waitForFinish, type TestRunner } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from '../qstash/upstash-app.js';

/**
 * Finding 2 of issue 19, as a scenario both stores run: `context.call`s to a target that never
 * answers used to fill every shared delivery slot, and another app's run made no progress. With
 * per-origin slots the target holds only its share; the other app's run completes meanwhile.
 */

/** A call target that takes requests and never answers; counts what it holds open. */
export interface HangingTarget {
  url: string;
  /** Requests received so far (each held open). */
  received(): number;
  close(): Promise<void>;
}

export async function startHangingTarget(): Promise<HangingTarget> {
  let received = 0;
  const server: Server = createServer(() => void (received += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => received,
    close: () => closeServer(server),
  };
}

/** Runner options of the scenario: few delivery slots, a share of 2 per call target. */
export const FAIR_SHARE_OPTIONS = { concurrency: 4, egress: { perOrigin: 2 } } as const;

/**
 * Six runs of app A each call the hanging target; once it holds its share, app B's two-step run
 * must complete, and the target must never have got more than its share of requests.
 */
export async function slowTargetLeavesOthersGoing(
  runner: Pick<TestRunner, 'runner' | 'url' | 'token'>,
  started: UpstashApp[],
): Promise<void> {
  const target = await startHangingTarget();
  try {
    const env = upstashEnv(runner as TestRunner);
    const callers = await startUpstashApp(
      runner as TestRunner,
      {
        caller: {
          route: async (context) => void (await context.call('slow', { url: `${target.url}/never`, method: 'GET' })),
        },
      },
      env,
    );
    const other = await startUpstashApp(
      runner as TestRunner,
      {
        steps: {
          route: async (context) => {
            const a = await context.run('a', async () => 1);
            return context.run('b', async () => a + 1);
          },
        },
      },
      env,
    );
    started.push(callers, other);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    for (let i = 0; i < 6; i++) await client.trigger({ url: `${callers.url}/caller`, body: {} });
    await vi.waitFor(() => expect(target.received()).toBe(FAIR_SHARE_OPTIONS.egress.perOrigin), {
      timeout: 10_000,
      interval: 20,
    });
    const { workflowRunId } = await client.trigger({ url: `${other.url}/steps`, body: {} });
    const { run } = await waitForFinish(runner.runner, workflowRunId, 15_000);
    expect(run.status).toBe('completed');
    expect(target.received()).toBe(FAIR_SHARE_OPTIONS.egress.perOrigin);
    await expectWaitingShown(runner.runner, target.url);
  } finally {
    await target.close();
  }
}

/** A run whose call waits for a slot says so where the dashboards read it, and /metrics counts it. */
async function expectWaitingShown(runner: Runner, origin: string): Promise<void> {
  const waiting = await vi.waitFor(
    async () => {
      const page = await runner.store.listRuns({});
      const reasons = page.runs.map((run) => runner.withWaitingReason(run).queuedReason).filter((r) => r !== undefined);
      if (reasons.length === 0) throw new Error('no run shows a waiting reason yet');
      return reasons;
    },
    { timeout: 5_000, interval: 20 },
  );
  expect(waiting[0]).toMatch(/^for a slot at http:\/\/127\.0\.0\.1:\d+: 2 of 2 requests in flight there$/);
  const metrics = await renderMetrics({ runner, stepDuration: new Histogram() });
  expect(metrics).toContain(`wfkit_egress_in_flight{kind="call",origin="${origin}"} 2\n`);
  expect(metrics).toMatch(new RegExp(`wfkit_egress_waiting\\{kind="call",origin="${origin}"\\} [1-9]`));
}
