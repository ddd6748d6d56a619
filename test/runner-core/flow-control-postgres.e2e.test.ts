import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { PostgresStore } from '../../runner-core/store/postgres/store.js';
import { startApp, type TestApp } from '../helpers/runner.js';
import { postgresRunners } from './postgres-runners.js';
import type { WfStartProcess } from './wf-start-process.js';

/**
 * Flow control across three `wf start` processes on one PostgreSQL database, one SIGKILLed while it
 * holds runs of the key: the app never sees more than `parallelism` runs of the key at once, the
 * rate is never exceeded, and every run completes.
 */

const TOKEN = 'wf_flow_control_pg_token';
const LEASE_MS = 1_500;
const PARALLELISM = 3;
const RUNS = 24;

let app: TestApp | undefined;

let reader: PostgresStore | undefined;
const cluster = postgresRunners('flow_control');

async function start(target: WfStartProcess, body: unknown, flowControl: unknown): Promise<string> {
  const response = await fetch(`${target.url}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: app!.url, body: JSON.stringify(body), headers: {}, retryDelayMs: 50, flowControl }),
  });
  if (response.status !== 201 && response.status !== 200)
    throw new Error(`POST /v1/runs answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { workflowRunId: string }).workflowRunId;
}

/** Waits (bounded) until every one of `ids` completed. */
async function allCompleted(ids: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await reader!.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM runs WHERE id = ANY($1) AND status = 'completed'`,
      [ids],
    );
    if (rows[0]?.n === ids.length) return;
    if (Date.now() > deadline)
      throw new Error(`Expected ${ids.length} completed runs within ${timeoutMs} ms, got ${rows[0]?.n}.`);
    await sleep(100);
  }
}

describe('flow control on PostgreSQL with three wf start runners', () => {
  it('holds parallelism and rate across runners, one of them killed mid-test, and completes every run', async () => {
    const started = await cluster.start(TOKEN, LEASE_MS);
    const { runners } = started;
    reader = started.reader;
    const [killed, ...survivors] = runners;

    let executing = 0;
    let maxExecuting = 0;
    const rateStarts: number[] = [];
    app = await startApp(
      async (context) => {
        const payload = context.requestPayload as { kind: 'parallel' | 'rate' };
        if (payload.kind === 'rate') {
          await context.run('first', () => {
            rateStarts.push(Date.now());
          });
          return;
        }
        for (let i = 0; i < 3; i++) {
          await context.run(`step-${i}`, async () => {
            executing += 1;
            maxExecuting = Math.max(maxExecuting, executing);
            try {
              await sleep(40);
            } finally {
              executing -= 1;
            }
          });
        }
      },
      { token: TOKEN, runnerUrl: survivors[0].url, retryDelay: 50 },
    );

    const ids: string[] = [];
    for (let n = 0; n < RUNS; n++)
      ids.push(await start(runners[n % 3]!, { kind: 'parallel', n }, { key: 'shared', parallelism: PARALLELISM }));
    // Kill the first runner once it holds a run of the key (bounded wait).
    const until = Date.now() + 20_000;
    for (;;) {
      const held = await reader.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM runs WHERE lease_owner = $1 AND status NOT IN ('completed', 'failed', 'cancelled')`,
        [killed.owner],
      );
      if ((held[0]?.n ?? 0) > 0) break;
      if (Date.now() > until)
        throw new Error(`Expected runner ${killed.owner} to hold a run within 20 s, it held none.`);
      await sleep(10);
    }
    killed.child.kill('SIGKILL');
    await killed.exited;
    await allCompleted(ids, 60_000);
    expect(maxExecuting).toBeGreaterThan(1);
    expect(maxExecuting).toBeLessThanOrEqual(PARALLELISM);

    // Rate 4 per second over the two survivors: any five first drives span at least the period.
    const rateIds: string[] = [];
    for (let n = 0; n < 10; n++)
      rateIds.push(await start(survivors[n % 2]!, { kind: 'rate', n }, { key: 'metered', rate: 4, periodMs: 1000 }));
    await allCompleted(rateIds, 30_000);
    expect(rateStarts).toHaveLength(10);
    // What the store guarantees, on the database's clock: any five admissions (each run's first
    // drive, stamped by the claim that admitted it) span at least the period. The app's own step
    // times add a busy machine's jitter between claim and step, so they are not what is asserted.
    const admitted = (
      await reader.query<{ at: number }[]>(
        'SELECT flow_started_at::float8 AS at FROM runs WHERE id = ANY($1) ORDER BY flow_started_at',
        [rateIds],
      )
    ).map((row) => row.at);
    expect(admitted).toHaveLength(10);
    for (let i = 0; i + 4 < admitted.length; i++) expect(admitted[i + 4]! - admitted[i]!).toBeGreaterThanOrEqual(999);
  }, 120_000);
});
