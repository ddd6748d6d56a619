import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@upstash/workflow';
import { waitForFinish, type TestRunner } from '../helpers/runner.js';
import { postgresApiRunners } from './postgres-runners.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/**
 * Two runners on one PostgreSQL database serve one @upstash/workflow app: runs are triggered
 * through both, the app publishes its steps to the first, both deliver (messages are claimed with
 * leases, FOR UPDATE SKIP LOCKED; a step published to one runner during the other's delivery is
 * held for that delivery and handed to it), every run completes and every step ran once.
 */

const TOKEN = 'wf_qstash_pg_token_0123456789';
const RUNS = 20;

let app: UpstashApp | undefined;

const { runners, stores } = postgresApiRunners({ database: 'qstash_runners', token: TOKEN });

afterAll(async () => {
  await app?.close();
});

describe('QStash engine on PostgreSQL with two runners', () => {
  it('both runners deliver, every run completes, every step runs once', async () => {
    const first = runners[0]!;
    const executions = new Map<string, number>();
    const delivered = runners.map(() => 0);
    for (const [i, r] of runners.entries()) {
      r.runner.events.subscribe((event) => void (event.type === 'attempt' && (delivered[i]! += 1)));
    }
    const asTest = { runner: first.runner, url: first.url, token: TOKEN } as TestRunner;
    app = await startUpstashApp(asTest, {
      steps: {
        route: async (context) => {
          for (const name of ['a', 'b', 'c']) {
            await context.run(name, async () => {
              const key = `${context.workflowRunId}/${name}`;
              executions.set(key, (executions.get(key) ?? 0) + 1);
              return name;
            });
          }
          return 'done';
        },
      },
    });
    // Half the runs triggered through each runner: a runner claims what is published to it at
    // once, so both take part whatever the timing. (Triggered through one only, the other would
    // take part only if its poll found a message due before the first runner's claim or hand-off.)
    const triggered = (
      await Promise.all(
        runners.map((r, n) => {
          const env = upstashEnv({ runner: r.runner, url: r.url, token: TOKEN } as TestRunner);
          const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
          const half = Array.from({ length: RUNS / 2 }, (_, i) => ({
            url: `${app!.url}/steps`,
            body: { i: n * RUNS + i },
          }));
          return client.trigger(half);
        }),
      )
    ).flat();
    expect(triggered).toHaveLength(RUNS);
    for (const { workflowRunId } of triggered) {
      const { run, steps } = await waitForFinish(stores[1]!, workflowRunId, 30_000);
      expect(run).toMatchObject({ status: 'completed', protocol: 'upstash' });
      expect(steps.map((s) => s.name)).toEqual(['a', 'b', 'c']);
    }
    expect(executions.size).toBe(RUNS * 3);
    expect([...executions.values()].every((n) => n === 1)).toBe(true);
    // Both runners took part: 4 deliveries a run (the start and three steps) shared between them.
    expect(delivered[0]! + delivered[1]!).toBeGreaterThanOrEqual(RUNS * 4);
    expect(Math.min(...delivered)).toBeGreaterThan(0);
  });

  it('flow control holds across both runners: one key, parallelism 1, never two deliveries at once', async () => {
    let inside = 0;
    let most = 0;
    const asTest = { runner: runners[1]!.runner, url: runners[1]!.url, token: TOKEN } as TestRunner;
    const limitedApp = await startUpstashApp(asTest, {
      limited: {
        route: async (context) => {
          for (const name of ['one', 'two']) {
            await context.run(name, async () => {
              inside += 1;
              most = Math.max(most, inside);
              await new Promise((r) => setTimeout(r, 40));
              inside -= 1;
            });
          }
        },
      },
    });
    try {
      const env = upstashEnv(asTest);
      const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
      const triggered = await client.trigger(
        Array.from({ length: 6 }, () => ({
          url: `${limitedApp.url}/limited`,
          body: {},
          flowControl: { key: 'pg-tenant', parallelism: 1 },
        })),
      );
      for (const { workflowRunId } of triggered)
        expect((await waitForFinish(stores[0]!, workflowRunId, 30_000)).run.status).toBe('completed');
      expect(most).toBe(1);
    } finally {
      await limitedApp.close();
    }
  });

  it('parallel steps complete when their results are published and delivered through both runners', async () => {
    const asTest = { runner: runners[0]!.runner, url: runners[0]!.url, token: TOKEN } as TestRunner;
    const parallelApp = await startUpstashApp(asTest, {
      fan: {
        route: async (context) => {
          const parts = await Promise.all(
            ['x', 'y', 'z'].map((name) => context.run(name, async () => name.toUpperCase())),
          );
          return parts.join('');
        },
      },
    });
    try {
      const env = upstashEnv(asTest);
      const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
      const triggered = await client.trigger(
        Array.from({ length: 10 }, () => ({ url: `${parallelApp.url}/fan`, body: {} })),
      );
      for (const { workflowRunId } of triggered) {
        const { run, steps } = await waitForFinish(stores[1]!, workflowRunId, 30_000);
        expect(run.status).toBe('completed');
        expect(steps.map((s) => [s.name, s.status])).toEqual([
          ['x', 'succeeded'],
          ['y', 'succeeded'],
          ['z', 'succeeded'],
        ]);
      }
    } finally {
      await parallelApp.close();
    }
  });
});
