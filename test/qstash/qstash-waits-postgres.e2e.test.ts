import { afterAll, describe, expect, it } from 'vitest';
import { Client } from '@upstash/workflow';
import { decodeValue } from '../../protocol/values.js';
import { waitForFinish, type TestRunner } from '../helpers/runner.js';
import { postgresApiRunners } from './postgres-runners.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/**
 * Waits across two runners on one PostgreSQL database: the app's waits are registered through one
 * runner, the notifies (before the wait, with the run id, and after it) and the timeouts go
 * through or are delivered by either; every run gets its own event exactly once.
 */

const TOKEN = 'wf_qstash_pg_waits_token_0123456789';
const RUNS = 12;

let app: UpstashApp | undefined;

const { runners, stores } = postgresApiRunners({ database: 'qstash_waits_runners', token: TOKEN });

afterAll(async () => {
  await app?.close();
});

const clientOf = (url: string): Client => new Client({ baseUrl: url, token: TOKEN });

describe('Upstash waits on PostgreSQL with two runners', () => {
  it('notifies through the other runner reach the right runs once, with lookback and timeouts', {
    timeout: 60_000,
  }, async () => {
    const [a, b] = runners as [(typeof runners)[0], (typeof runners)[0]];
    const asTest = { runner: a.runner, url: a.url, token: TOKEN } as TestRunner;
    const received = new Map<string, number>();
    app = await startUpstashApp(asTest, {
      waits: {
        route: async (context) => {
          const { i, timeout } = context.requestPayload as { i: number; timeout?: number };
          await context.run('ready', async () => i);
          const { eventData, timeout: timedOut } = await context.waitForEvent('event', `pg-ev-${i}`, {
            timeout: timeout ?? 60,
          });
          return await context.run('got', async () => {
            received.set(context.workflowRunId, (received.get(context.workflowRunId) ?? 0) + 1);
            return { eventData, timedOut };
          });
        },
      },
    });
    const env = upstashEnv(asTest);
    const viaA = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const viaB = clientOf(b.url);
    const ids = Array.from({ length: RUNS }, (_, i) => `pg-wait-${i}`);
    // The first third is notified (through B) before it even starts: lookback by run id.
    for (let i = 0; i < RUNS / 3; i++)
      expect(
        await viaB.notify({ eventId: `pg-ev-${i}`, eventData: { i, early: true }, workflowRunId: `wfr_${ids[i]}` }),
      ).toEqual([]);
    const last = RUNS - 1;
    const triggered = await viaA.trigger(
      ids.map((id, i) => ({
        url: `${app!.url}/waits`,
        body: i === last ? { i, timeout: 1 } : { i },
        workflowRunId: id,
      })),
    );
    // The rest but the last, once it waits, through B again.
    for (let i = RUNS / 3; i < last; i++) {
      for (let tries = 0; (await viaB.getWaiters({ eventId: `pg-ev-${i}` })).length === 0; tries++) {
        if (tries > 400) throw new Error(`run ${i} never waited`);
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(await viaB.notify({ eventId: `pg-ev-${i}`, eventData: { i, early: false } })).toHaveLength(1);
    }
    for (const [i, { workflowRunId }] of triggered.entries()) {
      const { run } = await waitForFinish(stores[1]!, workflowRunId, 30_000);
      expect(run.status).toBe('completed');
      const expected = i === last ? { timedOut: true } : { eventData: { i, early: i < RUNS / 3 }, timedOut: false };
      expect(decodeValue(run.output!), `run ${i}`).toEqual(expected);
    }
    expect([...received.values()].every((n) => n === 1)).toBe(true);
    expect(received.size).toBe(RUNS);
  });
});
