import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../protocol/values.js';
import { openPostgresStore, type PostgresStore } from '../../runner-core/store/postgres/store.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { Counter, startApp, type TestApp } from '../helpers/runner.js';
import { assertBuiltCli, spawnWfStart, type WfStartProcess } from './wf-start-process.js';

/**
 * Three `wf start` processes share one PostgreSQL database and 500 runs of 10 steps. During the
 * load one runner is SIGKILLed and another SIGSTOPped past its lease (then SIGCONTinued): every run
 * completes, every step has exactly one committed result that the later steps built on, and the
 * re-executions (at-least-once) are counted and reported.
 */

const TOKEN = 'wf_multi_runner_test_token';
const RUNS = 500;
const STEPS = 10;
const STEP_MS = 25;
const LEASE_MS = 2_000;
const STOPPED_MS = 2 * LEASE_MS + 1_000;
const UNFINISHED = `status NOT IN ('completed', 'failed', 'cancelled')`;

let pg: PostgresCluster | undefined;
let app: TestApp | undefined;
let reader: PostgresStore | undefined;
const runners: WfStartProcess[] = [];
const executions = new Counter();

beforeAll(async () => {
  assertBuiltCli();
  pg = await startPostgres({ database: 'multi_runner' });
}, 300_000);

afterAll(async () => {
  for (const r of runners) {
    if (!r.running()) continue;
    r.child.kill('SIGCONT');
    r.child.kill('SIGKILL');
  }
  await Promise.all(runners.map((r) => r.exited));
  await app?.close();
  await reader?.close();
  await pg?.stop();
});

/** Runs whose lease `owner` holds now. */
async function leasedBy(owner: string): Promise<string[]> {
  const rows = await reader!.query<{ id: string }[]>(`SELECT id FROM runs WHERE lease_owner = $1 AND ${UNFINISHED}`, [
    owner,
  ]);
  return rows.map((r) => r.id);
}

/** Milliseconds from `since` until none of `runIds` is leased by `owner` any more (another runner claimed them). */
async function takeoverTime(owner: string, runIds: string[], since: number): Promise<number> {
  for (;;) {
    const rows = await reader!.query<{ n: number }[]>(
      'SELECT count(*) AS n FROM runs WHERE lease_owner = $1 AND id = ANY($2)',
      [owner, runIds],
    );
    if (rows[0]?.n === 0) return Date.now() - since;
    if (Date.now() - since > 30_000) throw new Error(`${owner}'s runs were not taken over within 30 s`);
    await sleep(25);
  }
}

describe('three wf start runners on one PostgreSQL', () => {
  it('finish 500 runs x 10 steps while one is SIGKILLed and one SIGSTOPped past its lease', async () => {
    const started = Date.now();
    const args = ['--database', pg!.url, '--lease-ms', String(LEASE_MS), '--log-format', 'json', '--grace-ms', '1000'];
    runners.push(...(await Promise.all([0, 1, 2].map(() => spawnWfStart(args, { WF_TOKENS: TOKEN })))));
    const [killed, stopped, survivor] = runners as [WfStartProcess, WfStartProcess, WfStartProcess];
    reader = await openPostgresStore(pg!.url);

    app = await startApp(
      async (context) => {
        // Each step builds on the previous step's committed result: a stale result committed after
        // a later step had read another one would break the chain checked below.
        let chain = '';
        for (let i = 0; i < STEPS; i++) {
          chain = await context.run(`step-${i}`, async () => {
            const n = executions.hit(`${context.workflowRunId}:${i}`);
            await sleep(STEP_MS);
            return `${chain}|${i}.${n}`;
          });
        }
        return chain;
      },
      { token: TOKEN, runnerUrl: survivor.url, retryDelay: 50 },
    );

    // Starts go round-robin to the runners that are up; a start cut off by the kill is sent again
    // elsewhere with the same idempotency key, so it never makes a second run.
    const down = new Set<WfStartProcess>();
    let turn = 0;
    const startRun = async (n: number): Promise<string> => {
      for (let tries = 0; ; tries++) {
        const up = runners.filter((r) => !down.has(r));
        const target = up[turn++ % up.length]!;
        try {
          const response = await fetch(`${target.url}/v1/runs`, {
            method: 'POST',
            headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              url: app!.url,
              body: JSON.stringify({ n }),
              headers: {},
              idempotencyKey: `multi-${n}`,
              retryDelayMs: 50,
            }),
          });
          if (response.status !== 201 && response.status !== 200)
            throw new Error(`POST /v1/runs answered ${response.status}: ${await response.text()}`);
          return ((await response.json()) as { workflowRunId: string }).workflowRunId;
        } catch (error) {
          if (tries >= 5) throw error;
        }
      }
    };

    const starts: Promise<string>[] = [];
    let killedAt = 0;
    let stoppedAt = 0;
    let heldByKilled: string[] = [];
    let heldByStopped: string[] = [];
    const BATCH = 20;
    for (let n = 0; n < RUNS; n += BATCH) {
      for (let k = n; k < Math.min(RUNS, n + BATCH); k++) starts.push(startRun(k));
      await sleep(150);
      if (killedAt === 0 && n >= 120 && (heldByKilled = await leasedBy(killed.owner)).length >= 3) {
        down.add(killed);
        killed.child.kill('SIGKILL');
        killedAt = Date.now();
      }
      if (stoppedAt === 0 && n >= 240 && (heldByStopped = await leasedBy(stopped.owner)).length >= 3) {
        down.add(stopped);
        stopped.child.kill('SIGSTOP');
        stoppedAt = Date.now();
      }
    }
    expect(killedAt, 'the first runner was killed during the load').toBeGreaterThan(0);
    expect(stoppedAt, 'the second runner was stopped during the load').toBeGreaterThan(0);
    const [killTakeoverMs, stopTakeoverMs] = await Promise.all([
      takeoverTime(killed.owner, heldByKilled, killedAt),
      takeoverTime(stopped.owner, heldByStopped, stoppedAt),
    ]);
    await sleep(Math.max(0, stoppedAt + STOPPED_MS - Date.now()));
    stopped.child.kill('SIGCONT');
    down.delete(stopped);
    const ids = await Promise.all(starts);
    expect(new Set(ids).size).toBe(RUNS);

    // Every run completes (on whichever runner holds it).
    const deadline = Date.now() + 90_000;
    let counts: { status: string; n: number }[] = [];
    for (;;) {
      counts = await reader.query('SELECT status, count(*) AS n FROM runs GROUP BY status ORDER BY status');
      if (counts.length === 1 && counts[0]?.status === 'completed' && counts[0].n === RUNS) break;
      if (Date.now() > deadline) throw new Error(`Not every run completed within 90 s: ${JSON.stringify(counts)}`);
      await sleep(200);
    }

    // One committed result per (run, step) (the steps table's primary key allows no other), all
    // of them succeeded, and each step built on the one before it.
    const steps = await reader.query<
      { run_id: string; idx: number; status: string; output: string; reported_executions: number }[]
    >('SELECT run_id, idx, status, output, reported_executions FROM steps ORDER BY run_id, idx');
    expect(steps.length).toBe(RUNS * STEPS);
    const outputs = new Map<string, string[]>();
    for (const step of steps) {
      expect(step.status).toBe('succeeded');
      const list = outputs.get(step.run_id) ?? [];
      list.push(decodeValue(step.output) as string);
      outputs.set(step.run_id, list);
    }
    const runs = await reader.query<{ id: string; output: string; steps_done: number }[]>(
      'SELECT id, output, steps_done FROM runs',
    );
    for (const run of runs) {
      const chain = outputs.get(run.id)!;
      for (const [i, output] of chain.entries()) {
        const previous = (chain[i - 1] ?? '').replace(/[|.]/g, '\\$&');
        expect(output, `${run.id} step ${i}`).toMatch(new RegExp(`^${previous}\\|${i}\\.\\d+$`));
      }
      expect(decodeValue(run.output), `${run.id} output`).toBe(chain.at(-1));
      expect(run.steps_done).toBe(STEPS);
      // The committed result is one of the executions the app saw.
      for (const [i, output] of chain.entries()) {
        expect(Number(/\.(\d+)$/.exec(output)![1])).toBeLessThanOrEqual(executions.of(`${run.id}:${i}`));
      }
    }

    // Re-executions: what the app ran beyond one execution per step, and what the store counted.
    const appExecutions = [...executions.counts.values()].reduce((a, b) => a + b, 0);
    const storeExecutions = steps.reduce((sum, s) => sum + s.reported_executions, 0);
    const reExecutedSteps = [...executions.counts.values()].filter((n) => n > 1).length;
    const tail = (r: WfStartProcess): string =>
      `its log ends:\n${`${r.stdout()}\n${r.stderr()}`.trim().split('\n').slice(-15).join('\n')}`;
    // The stopped runner reads its stale drives' answers only once it runs again, which on a loaded
    // machine can be after the other two completed every run: its report is awaited, not sampled.
    const lostLeases = (): number =>
      stopped.jsonLines().filter((line) => /lost the lease/.test(String(line.msg))).length;
    const reportBy = Date.now() + 30_000;
    while (lostLeases() === 0 && Date.now() < reportBy) await sleep(50);
    const rejected = lostLeases();
    expect(appExecutions).toBeGreaterThanOrEqual(storeExecutions);
    expect(storeExecutions).toBeGreaterThanOrEqual(RUNS * STEPS);
    // The stopped runner came back holding drives another runner had taken over: fencing refused
    // their commits, and it said so (once per run) instead of committing stale results.
    expect(rejected, tail(stopped)).toBeGreaterThanOrEqual(1);
    expect(killTakeoverMs).toBeLessThan(LEASE_MS + 6_000);
    expect(stopTakeoverMs).toBeLessThan(LEASE_MS + 6_000);

    // The two runners left stop cleanly on SIGTERM.
    for (const r of [stopped, survivor]) r.child.kill('SIGTERM');
    expect((await stopped.exited).code, tail(stopped)).toBe(0);
    expect((await survivor.exited).code, tail(survivor)).toBe(0);
    expect(survivor.otherLines()).toEqual([]);

    const report = {
      runs: RUNS,
      stepsPerRun: STEPS,
      runners: 3,
      leaseMs: LEASE_MS,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      reExecutions: appExecutions - RUNS * STEPS,
      reExecutedSteps,
      storeCountedReExecutions: storeExecutions - RUNS * STEPS,
      killed: { heldRuns: heldByKilled.length, takeoverMs: killTakeoverMs },
      stopped: {
        heldRuns: heldByStopped.length,
        stoppedMs: STOPPED_MS,
        takeoverMs: stopTakeoverMs,
        staleDrivesFenced: rejected,
      },
    };
    console.log(`multi-runner: ${JSON.stringify(report)}`);
  }, 120_000);
});
