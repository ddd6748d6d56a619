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
 * kill -9 of the runner: `wf start` on a SQLite file is SIGKILLed while 24 runs are mid-way, and a
 * new one on the same file and port finishes them. Every run completes, every step has exactly one
 * committed result from a real execution, and no step executes after its result was committed.
 */

const seed = seedFromEnv();
const RUNS = 24;
let folder: ReturnType<typeof tempFolder>;
const runners: WfStartProcess[] = [];
let app: AppProcess | undefined;

beforeAll(() => {
  assertBuiltCli();
  assertBuiltAdapter();
  folder = tempFolder('wfkit-chaos-kill-runner-');
});

afterAll(async () => {
  for (const r of runners) if (r.running()) r.child.kill('SIGKILL');
  await Promise.all(runners.map((r) => r.exited));
  await app?.kill();
  folder?.remove();
});

describe(`chaos: kill -9 of the runner (seed ${seed}, WF_FUZZ_SEED to replay)`, () => {
  it('finishes every run on a restarted runner, each step committed once and never executed after', async () => {
    const dbPath = join(folder.dir, 'runner.db');
    const logFile = join(folder.dir, 'executions.ndjson');
    const args = ['--database', dbPath, '--log-format', 'json', '--grace-ms', '0'];
    const first = await spawnWfStart(args, RUNNER_ENV, folder.dir);
    runners.push(first);
    const port = new URL(first.url).port;
    app = await spawnApp({ token: CHAOS_TOKEN, runnerUrl: first.url, logFile });

    const plans = planRuns(seededRandom(seed), RUNS, [5, 8], [60, 250]);
    const ids = await Promise.all(plans.map((plan) => startThroughApp(app!.url, plan)));
    const planOf = new Map<string, RunPlan>(ids.map((id, i) => [id, plans[i]!]));

    // Kill it with about a third of the steps done: most runs are mid-way, a step executing in each.
    await untilExecutions(logFile, (lines) => shareEnded(lines, plans) >= 0.3, '30 % of the steps ended');
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await spawnWfStart([...args, '--port', port], RUNNER_ENV, folder.dir);
    runners.push(second);
    const results = await waitForRunsToEnd(() => second.url, CHAOS_TOKEN, ids, 60_000);
    const executions = readExecutions(logFile);
    const problems = brokenInvariants(results, (id) => planOf.get(id)!.stepMs.length, executions);
    expect(problems, `seed ${seed}; runner log tail:\n${second.stderr().slice(-2000)}`).toEqual([]);
    expect(app.running(), 'the app is still up').toBe(true);
    console.log(`chaos kill-runner: ${JSON.stringify({ seed, runs: RUNS, reExecutions: reExecutions(executions) })}`);
  }, 120_000);
});
