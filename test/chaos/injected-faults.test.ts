import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuiltAdapter, readExecutions, spawnApp, type AppProcess } from '../helpers/app-process.js';
import {
  FAULT_KINDS,
  startFaultProxy,
  type FaultKind,
  type FaultProxy,
  type FaultRecord,
} from '../helpers/fault-proxy.js';
import { seededRandom, seedFromEnv } from '../helpers/seeded-random.js';
import { assertBuiltCli, spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import { CHAOS_TOKEN, planRuns, RUNNER_ENV, startThroughApp, tempFolder, type RunPlan } from './harness.js';
import { brokenInvariants, reExecutions, waitForRunsToEnd } from './invariants.js';

/**
 * 30 % injected HTTP faults between the runner and the app, with the default retry settings: a
 * fault proxy on the drive path resets connections, answers 500, cuts response streams, drops the
 * answer after the app executed, and delivers requests after the runner stopped waiting. The app's
 * public URL is the proxy's (the runner signs drives for it). Every run completes, every step has
 * one committed result from a real execution, and none executes after its result was committed:
 * a late drive must be refused by its signed deadline, never replayed into committed steps.
 */

const seed = seedFromEnv();
const RUNS = 40;
const RATE = 0.3;
// Short, so late deliveries stay fast; long enough that a loaded CI machine still answers drives in time.
const DRIVE_TIMEOUT_MS = 3_000;
/**
 * Besides the seeded draw: runs 0–4 each meet one kind on their first drive (every kind happens with
 * any seed), and run 5's first five drives all fail without a step failing (the app is unreachable,
 * not broken): more than the 3 default retries, which such faults must not spend.
 */
const FORCED: FaultKind[][] = [
  ...FAULT_KINDS.map((kind) => [kind]),
  ['reset', 'cut-stream', 'drop-answer', 'late', 'reset'],
];
let folder: ReturnType<typeof tempFolder>;
let proxy: FaultProxy | undefined;
let app: AppProcess | undefined;
let wfStart: WfStartProcess | undefined;

/** `wf start` with a short drive timeout; resolves with its URL. */
async function startRunner(dbPath: string): Promise<{ url: string }> {
  wfStart = await spawnWfStart(
    ['--database', dbPath, '--drive-timeout', String(DRIVE_TIMEOUT_MS), '--log-format', 'json'],
    RUNNER_ENV,
    folder.dir,
  );
  return wfStart;
}

beforeAll(() => {
  assertBuiltCli();
  assertBuiltAdapter();
  folder = tempFolder('wfkit-chaos-faults-');
});

afterAll(async () => {
  if (wfStart?.running()) wfStart.child.kill('SIGKILL');
  await wfStart?.exited;
  await app?.kill();
  await proxy?.close();
  folder?.remove();
});

function tally(records: readonly FaultRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of records) counts[r.kind] = (counts[r.kind] ?? 0) + 1;
  return counts;
}

describe(`chaos: 30 % injected HTTP faults (seed ${seed}, WF_FUZZ_SEED to replay)`, () => {
  it('completes every run with one committed result per step, none executed after its commit', async () => {
    const logFile = join(folder.dir, 'executions.ndjson');
    const started = await startRunner(join(folder.dir, 'runner.db'));
    // The app listens first (the proxy needs its port), then learns its public URL: the proxy's.
    const probe = await spawnApp({ token: CHAOS_TOKEN, runnerUrl: started.url, logFile });
    proxy = await startFaultProxy({
      target: `http://127.0.0.1:${probe.port}`,
      seed,
      rate: RATE,
      lateMs: DRIVE_TIMEOUT_MS + 1_000,
      forced: FORCED,
    });
    await probe.kill();
    app = await spawnApp({
      token: CHAOS_TOKEN,
      runnerUrl: started.url,
      logFile,
      port: probe.port,
      publicUrl: `${proxy.url}/workflow`,
      timeBudgetMs: 100,
    });

    // Short steps and a 100 ms time budget: two or three drives per run, so about a hundred drives meet the faults.
    const plans = planRuns(seededRandom(seed), RUNS, [5, 8], [10, 60]);
    const ids = await Promise.all(plans.map((plan) => startThroughApp(app!.url, plan)));
    const planOf = new Map<string, RunPlan>(ids.map((id, i) => [id, plans[i]!]));

    const results = await waitForRunsToEnd(() => started.url, CHAOS_TOKEN, ids, 120_000);
    const executions = readExecutions(logFile);
    const faults = tally(proxy.records);
    const lateAccepted = proxy.records.filter(
      (r) => r.kind === 'late' && r.appStatus !== undefined && r.appStatus < 400,
    );
    const problems = brokenInvariants(results, (id) => planOf.get(id)!.stepMs.length, executions);
    for (const r of lateAccepted)
      problems.push(
        `${r.runId}: a drive delivered after the runner's timeout was answered ${r.appStatus} (key ${r.key}), not refused`,
      );
    expect(problems, `seed ${seed}; faults ${JSON.stringify(faults)}`).toEqual([]);
    expect(Object.keys(faults).sort(), `every kind of fault happened: ${JSON.stringify(faults)}`).toEqual(
      [...FAULT_KINDS, 'none'].sort(),
    );
    console.log(
      `chaos injected-faults: ${JSON.stringify({ seed, runs: RUNS, faults, reExecutions: reExecutions(executions) })}`,
    );
  }, 180_000);
});
