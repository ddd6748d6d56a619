import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuiltAdapter, readExecutions, spawnApp, type AppProcess } from '../helpers/app-process.js';
import { seededRandom, seedFromEnv } from '../helpers/seeded-random.js';
import { assertBuiltCli, spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import {
  CHAOS_TOKEN,
  planRuns,
  RUNNER_ENV,
  shareEnded,
  startThroughApp,
  tempFolder,
  untilExecutions,
  type RunPlan,
} from './harness.js';
import { brokenInvariants, reExecutions, waitForRunsToEnd } from './invariants.js';

/**
 * kill -9 of the app: the app process is SIGKILLed while 24 runs are mid-way (a step executing in
 * most of them) and started again on the same port. The runner (`wf start`, SQLite) finishes every
 * run: one committed result per step, from a real execution, none executed after its commit.
 */

const seed = seedFromEnv();
const RUNS = 24;
let folder: ReturnType<typeof tempFolder>;
let runner: WfStartProcess | undefined;
const apps: AppProcess[] = [];

beforeAll(() => {
  assertBuiltCli();
  assertBuiltAdapter();
  folder = tempFolder('wfkit-chaos-kill-app-');
});

afterAll(async () => {
  if (runner?.running()) runner.child.kill('SIGKILL');
  await runner?.exited;
  await Promise.all(apps.map((app) => app.kill()));
  folder?.remove();
});

describe(`chaos: kill -9 of the app (seed ${seed}, WF_FUZZ_SEED to replay)`, () => {
  it('finishes every run once the app is back on its port, each step committed once and never executed after', async () => {
    const logFile = join(folder.dir, 'executions.ndjson');
    runner = await spawnWfStart(
      ['--database', join(folder.dir, 'runner.db'), '--log-format', 'json'],
      RUNNER_ENV,
      folder.dir,
    );
    const first = await spawnApp({ token: CHAOS_TOKEN, runnerUrl: runner.url, logFile });
    apps.push(first);

    const plans = planRuns(seededRandom(seed), RUNS, [5, 8], [60, 250]);
    const ids = await Promise.all(plans.map((plan) => startThroughApp(first.url, plan)));
    const planOf = new Map<string, RunPlan>(ids.map((id, i) => [id, plans[i]!]));

    await untilExecutions(logFile, (lines) => shareEnded(lines, plans) >= 0.3, '30 % of the steps ended');
    await first.kill();
    expect((await first.exited).signal).toBe('SIGKILL');
    const second = await spawnApp({ token: CHAOS_TOKEN, runnerUrl: runner.url, logFile, port: first.port });
    apps.push(second);

    const results = await waitForRunsToEnd(() => runner!.url, CHAOS_TOKEN, ids, 60_000);
    const executions = readExecutions(logFile);
    const problems = brokenInvariants(results, (id) => planOf.get(id)!.stepMs.length, executions);
    expect(problems, `seed ${seed}; runner log tail:\n${runner.stderr().slice(-2000)}`).toEqual([]);
    expect(runner.running(), 'the runner is still up').toBe(true);
    console.log(`chaos kill-app: ${JSON.stringify({ seed, runs: RUNS, reExecutions: reExecutions(executions) })}`);
  }, 120_000);
});
