import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuiltAdapter, readExecutions, spawnApp, type AppProcess } from '../helpers/app-process.js';
import { seededRandom, seedFromEnv } from '../helpers/seeded-random.js';
import { assertBuiltCli, spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import {
  CHAOS_TOKEN,
  planRuns,
  RUNNER_ENV,
  runsInFlight,
  startThroughApp,
  tempFolder,
  untilExecutions,
  type RunPlan,
} from './harness.js';
import { brokenInvariants, reExecutions, waitForRunsToEnd } from './invariants.js';

/**
 * A 30-second app outage with runs in flight: the app closes its listener and drops every
 * connection while at least 20 runs are mid-way, and listens again on the same port 30 s later.
 * An unreachable app is not a step failure (DESIGN.md, Retry): the runner keeps trying on its own
 * schedule with the default retry settings, and every run completes once the app is back.
 */

const seed = seedFromEnv();
const RUNS = 24;
const OUTAGE_MS = 30_000;
/** After the app is back: the runner's capped reconnect schedule may wait up to a minute. */
const RECOVERY_MS = 90_000;
let folder: ReturnType<typeof tempFolder>;
let runner: WfStartProcess | undefined;
let app: AppProcess | undefined;

beforeAll(() => {
  assertBuiltCli();
  assertBuiltAdapter();
  folder = tempFolder('wfkit-chaos-outage-');
});

afterAll(async () => {
  if (runner?.running()) runner.child.kill('SIGKILL');
  await runner?.exited;
  await app?.kill();
  folder?.remove();
});

describe(`chaos: the app down for 30 s (seed ${seed}, WF_FUZZ_SEED to replay)`, () => {
  it('finishes every run in flight once the app listens again, each step committed once and never executed after', async () => {
    const logFile = join(folder.dir, 'executions.ndjson');
    runner = await spawnWfStart(
      ['--database', join(folder.dir, 'runner.db'), '--log-format', 'json'],
      RUNNER_ENV,
      folder.dir,
    );
    app = await spawnApp({ token: CHAOS_TOKEN, runnerUrl: runner.url, logFile });

    // Long steps (0.3–0.8 s, 5–8 of them): every run is still in flight when the app goes away.
    const plans = planRuns(seededRandom(seed), RUNS, [5, 8], [300, 800]);
    const ids = await Promise.all(plans.map((plan) => startThroughApp(app!.url, plan)));
    const planOf = new Map<string, RunPlan>(ids.map((id, i) => [id, plans[i]!]));

    await untilExecutions(logFile, (lines) => runsInFlight(lines, planOf) >= 20, '20 runs in flight');
    app.child.kill('SIGUSR2');
    await app.printed(/app closed/);
    // The outage itself is the scenario (not a wait for a state): 30 s without a listener.
    await sleep(OUTAGE_MS);
    app.child.kill('SIGUSR2');
    await app.printed(/app listening on /, 2);

    const results = await waitForRunsToEnd(() => runner!.url, CHAOS_TOKEN, ids, RECOVERY_MS);
    const executions = readExecutions(logFile);
    const problems = brokenInvariants(results, (id) => planOf.get(id)!.stepMs.length, executions);
    expect(problems, `seed ${seed}; runner log tail:\n${runner.stderr().slice(-2000)}`).toEqual([]);
    console.log(`chaos app-outage: ${JSON.stringify({ seed, runs: RUNS, reExecutions: reExecutions(executions) })}`);
  }, 180_000);
});
