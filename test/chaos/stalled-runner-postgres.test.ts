import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuiltAdapter, readExecutions, spawnApp, type AppProcess } from '../helpers/app-process.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { seededRandom, seedFromEnv } from '../helpers/seeded-random.js';
import { assertBuiltCli, spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import {
  CHAOS_TOKEN,
  planRuns,
  RUNNER_ENV,
  shareEnded,
  startOnRunner,
  tempFolder,
  untilExecutions,
  type RunPlan,
} from './harness.js';
import { brokenInvariants, reExecutions, waitForRunsToEnd } from './invariants.js';

/**
 * A stalled runner on PostgreSQL: three `wf start` processes share one database and 30 runs
 * (started round-robin on each). One is SIGSTOPped mid-run, past its lease, so the others take its
 * runs over, and SIGCONTinued later, when it still believes it holds them. Every run completes,
 * each step has one committed result from a real execution, and none executes after its commit:
 * the woken runner's stale drives and commits must change nothing.
 */

const seed = seedFromEnv();
const RUNS = 30;
const LEASE_MS = 2_000;
const STOPPED_MS = 2 * LEASE_MS + 1_000;
let pg: PostgresCluster | undefined;
let folder: ReturnType<typeof tempFolder>;
let app: AppProcess | undefined;
const runners: WfStartProcess[] = [];

beforeAll(async () => {
  assertBuiltCli();
  assertBuiltAdapter();
  folder = tempFolder('wfkit-chaos-stall-');
  pg = await startPostgres({ database: 'chaos_stall' });
}, 300_000);

afterAll(async () => {
  for (const r of runners) {
    if (!r.running()) continue;
    r.child.kill('SIGCONT');
    r.child.kill('SIGKILL');
  }
  await Promise.all(runners.map((r) => r.exited));
  await app?.kill();
  await pg?.stop();
  folder?.remove();
});

describe(`chaos: a stalled runner on PostgreSQL (seed ${seed}, WF_FUZZ_SEED to replay)`, () => {
  it('completes every run while one of three runners is SIGSTOPped past its lease and woken', async () => {
    const logFile = join(folder.dir, 'executions.ndjson');
    const args = ['--database', pg!.url, '--lease-ms', String(LEASE_MS), '--log-format', 'json', '--grace-ms', '0'];
    runners.push(...(await Promise.all([0, 1, 2].map(() => spawnWfStart(args, RUNNER_ENV, folder.dir)))));
    const [stalled, , survivor] = runners as [WfStartProcess, WfStartProcess, WfStartProcess];
    app = await spawnApp({ token: CHAOS_TOKEN, runnerUrl: survivor.url, logFile });

    // A run is leased to the runner it was started on, so a third of them belong to the one stalled.
    const plans = planRuns(seededRandom(seed), RUNS, [5, 8], [200, 600]);
    const ids = await Promise.all(plans.map((plan, i) => startOnRunner(runners[i % 3]!.url, app!.url, plan)));
    const planOf = new Map<string, RunPlan>(ids.map((id, i) => [id, plans[i]!]));

    const lines = await untilExecutions(logFile, (l) => shareEnded(l, plans) >= 0.3, '30 % of the steps ended');
    stalled.child.kill('SIGSTOP');
    const ended = new Set(lines.filter((l) => l.e === 'end').map((l) => `${l.runId}#${l.index}`));
    const heldUnfinished = ids.filter(
      (id, i) => i % 3 === 0 && planOf.get(id)!.stepMs.some((_, index) => !ended.has(`${id}#${index}`)),
    );
    expect(heldUnfinished.length, 'the stalled runner held unfinished runs when it stopped').toBeGreaterThanOrEqual(3);
    // The stall is the scenario: longer than two leases, so the others take the runs over first.
    await sleep(STOPPED_MS);
    stalled.child.kill('SIGCONT');

    const results = await waitForRunsToEnd(() => survivor.url, CHAOS_TOKEN, ids, 90_000);
    const executions = readExecutions(logFile);
    const problems = brokenInvariants(results, (id) => planOf.get(id)!.stepMs.length, executions);
    expect(
      problems,
      `seed ${seed}; stalled runner's log tail:\n${stalled.stdout().slice(-2000)}${stalled.stderr().slice(-2000)}`,
    ).toEqual([]);
    expect(
      runners.every((r) => r.running()),
      'all three runners are still up',
    ).toBe(true);
    console.log(
      `chaos stalled-runner-postgres: ${JSON.stringify({ seed, runs: RUNS, leaseMs: LEASE_MS, stoppedMs: STOPPED_MS, heldUnfinished: heldUnfinished.length, reExecutions: reExecutions(executions) })}`,
    );
  }, 180_000);
});
