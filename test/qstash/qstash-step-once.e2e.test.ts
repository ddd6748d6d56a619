import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Client } from '@upstash/workflow';
import { decodeValue } from '../../protocol/values.js';
import { closeStarted, startTestRunner, waitForFinish, type TestRunner } from '../helpers/runner.js';
import { postgresApiRunners } from './postgres-runners.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/**
 * Finding 10 of issue 19 with the real @upstash/workflow: a runner that stored a step's result
 * and then lost the delivery's settle (killed, or its store failed in between) delivered it again
 * after the lease, and the step ran again, with a second result message. The result now settles
 * its delivery in its own transaction: the step runs once and its row holds what the SDK replays.
 */

const TOKEN = 'wf_step_once_token_0123456789';
const apps: UpstashApp[] = [];
const pg = postgresApiRunners({ database: 'qstash_step_once', token: TOKEN, count: 1, leaseMs: 1_000 });

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  await closeStarted();
});
afterAll(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function runsEachStepOnce(target: TestRunner): Promise<void> {
  const executions = new Map<string, number>();
  const count = (name: string): number => {
    const n = (executions.get(name) ?? 0) + 1;
    executions.set(name, n);
    return n;
  };
  const app = await startUpstashApp(target, {
    once: {
      route: async (context) => {
        const one = await context.run('one', async () => count('one'));
        // Still running when the unsettled delivery's lease runs out (a finished run's messages are dropped).
        await context.sleep('pause', 3);
        const two = await context.run('two', async () => count('two'));
        return [one, two];
      },
    },
  });
  apps.push(app);
  const messages = target.runner.qstash!.context.messages;
  const settle = messages.settle.bind(messages);
  let faults = 0;
  // Injected fault: the first settle of a delivered message fails, as if the runner died right after the app published.
  messages.settle = async (...args) => {
    if (faults === 0 && args[2].status === 'delivered') {
      faults += 1;
      throw new Error('injected: the store is unavailable');
    }
    return settle(...args);
  };
  const env = upstashEnv(target);
  const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
  const { workflowRunId } = await client.trigger({ url: `${app.url}/once`, body: {} });
  const { run, steps } = await waitForFinish(target.runner, workflowRunId, 20_000);
  messages.settle = settle;
  expect(faults).toBe(1);
  expect(run.status).toBe('completed');
  expect(Object.fromEntries(executions)).toEqual({ one: 1, two: 1 });
  expect(steps.map((s) => [s.name, decodeValue(s.output ?? undefined)])).toEqual([
    ['one', 1],
    ['pause', undefined],
    ['two', 1],
  ]);
  expect(decodeValue(run.output ?? undefined)).toEqual([1, 1]);
}

describe('a step whose result was stored runs once, though its delivery was not settled', () => {
  it('on SQLite', async () => {
    await runsEachStepOnce(await startTestRunner({ runner: { leaseMs: 600, pollMs: 100 } }));
  });

  it('on PostgreSQL', async () => {
    const [first] = pg.runners;
    await runsEachStepOnce({ runner: first!.runner, url: first!.url, token: TOKEN } as TestRunner);
  });
});
