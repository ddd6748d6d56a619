import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '@upstash/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuiltCli, spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import { CHAOS_TOKEN, RUNNER_ENV, tempFolder } from './harness.js';
import { waitForRunsToEnd, type RunResult } from './invariants.js';

/**
 * kill -9 of the runner under @upstash/workflow runs (finding 10 of issue 19): `wf start` on a
 * SQLite file is SIGKILLed twice while 20 runs of 4 steps are mid-way, and restarted on the same
 * file and port. Every run completes; every step has one result message; the step rows hold the
 * values the SDK replayed (the run's result is the list of them); no step is sent again once its
 * result was stored (no execution starts later than a delivery already in transit could).
 */

const RUNS = 20;
const STEPS = 4;
/** How long after a step's result was stored a delivery sent before that may still start executing it. */
const IN_TRANSIT_MS = 500;
const APP = resolve(import.meta.dirname, 'fixtures/upstash-steps-app.ts');
const KEYS = {
  QSTASH_CURRENT_SIGNING_KEY: `sig_${randomBytes(24).toString('base64url')}`,
  QSTASH_NEXT_SIGNING_KEY: `sig_${randomBytes(24).toString('base64url')}`,
};

interface Execution {
  runId: string;
  step: string;
  value: string;
  at: number;
}

let folder: ReturnType<typeof tempFolder>;
const runners: WfStartProcess[] = [];
let app: ReturnType<typeof spawn> | undefined;

beforeAll(() => {
  assertBuiltCli();
  folder = tempFolder('wfkit-chaos-upstash-kill-');
});

afterAll(async () => {
  for (const r of runners) if (r.running()) r.child.kill('SIGKILL');
  await Promise.all(runners.map((r) => r.exited));
  if (app && app.exitCode === null) {
    const exited = new Promise((done) => app!.once('exit', done));
    app.kill('SIGTERM');
    await exited;
  }
  folder?.remove();
});

function readExecutions(logFile: string): Execution[] {
  if (!existsSync(logFile)) return [];
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Execution);
}

async function until(what: string, ready: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}.`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

/** The app as a child process, configured only as an Upstash user configures one; resolves its URL. */
async function startApp(runnerUrl: string, logFile: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!/^(QSTASH_|UPSTASH_|WF_|VITEST|NODE_OPTIONS$|PORT$)/.test(key)) env[key] = value;
  app = spawn(process.execPath, [APP], {
    env: { ...env, QSTASH_URL: runnerUrl, QSTASH_TOKEN: CHAOS_TOKEN, ...KEYS, LOG_FILE: logFile, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  app.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  app.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until(`the app to listen (output: ${output})`, () => /listening on http/.test(output), 20_000);
  return /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;
}

/** Every broken promise of the scenario, one line each. */
function problems(
  results: Map<string, RunResult | undefined>,
  executions: readonly Execution[],
  resultMessages: Map<string, number>,
): string[] {
  const out: string[] = [];
  for (const [id, result] of results) {
    if (result?.run.status !== 'completed') {
      out.push(`${id}: ${result?.run.status ?? 'unknown'} ${JSON.stringify(result?.run.error ?? null)}`);
      continue;
    }
    const replayed = result.run.output as string[];
    result.steps.forEach((step, i) => {
      if (step.output !== replayed[i])
        out.push(`${id} ${step.name}: the row holds ${String(step.output)}, the SDK replayed ${replayed[i]}`);
      // A delivery sent before the result was stored may still be executing it (the runner was killed
      // while the first one ran; its answer landed just after the restarted runner sent the step
      // again): at least once, as for a native step. What must never happen is a delivery *sent*
      // after the result was stored, the old engine's fault, which showed as executions a restart
      // (seconds) later. An execution within IN_TRANSIT_MS of the store is one already on its way.
      const late = executions.filter(
        (e) =>
          e.runId === id && e.step === step.name && step.finishedAt !== null && e.at > step.finishedAt + IN_TRANSIT_MS,
      );
      if (late.length > 0)
        out.push(
          `${id} ${step.name}: executed at ${late.map((e) => e.at).join(', ')}, more than ${IN_TRANSIT_MS} ms after its result was stored at ${step.finishedAt}`,
        );
    });
    if (result.steps.length !== STEPS) out.push(`${id}: ${result.steps.length} step rows, expected ${STEPS}`);
    for (let stepId = 1; stepId <= STEPS; stepId++) {
      const n = resultMessages.get(`${id}#${stepId}`) ?? 0;
      if (n !== 1) out.push(`${id} step ${stepId}: ${n} result messages`);
    }
  }
  return out;
}

/** How many result messages each step of each run has, from the runner's database. */
function countResultMessages(dbPath: string): Map<string, number> {
  const db = new Database(dbPath, { readonly: true });
  try {
    const counts = new Map<string, number>();
    for (const row of db.prepare("SELECT run_id, spec FROM qstash_messages WHERE call_type = 'step'").all() as {
      run_id: string;
      spec: string;
    }[]) {
      let stepId: unknown;
      try {
        stepId = (JSON.parse((JSON.parse(row.spec) as { body: string }).body) as { stepId?: unknown }).stepId;
      } catch {
        continue; // the payload
      }
      if (typeof stepId !== 'number' || stepId <= 0) continue;
      const key = `${row.run_id}#${stepId}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return counts;
  } finally {
    db.close();
  }
}

describe('chaos: kill -9 of the runner under @upstash/workflow runs', () => {
  it('finishes every run after two kills: one result message per step, rows equal to what the SDK replayed, no step sent again after its result was stored', async () => {
    const dbPath = join(folder.dir, 'runner.db');
    const logFile = join(folder.dir, 'executions.ndjson');
    const env = { ...RUNNER_ENV, ...KEYS };
    const args = ['--database', dbPath, '--log-format', 'json', '--grace-ms', '0'];
    const first = await spawnWfStart(args, env, folder.dir);
    runners.push(first);
    const port = new URL(first.url).port;
    const appUrl = await startApp(first.url, logFile);
    const client = new Client({ baseUrl: first.url, token: CHAOS_TOKEN });
    const triggered = await client.trigger(
      Array.from({ length: RUNS }, (_, i) => ({ url: `${appUrl}/steps`, body: { i } })),
    );
    const ids = triggered.map((t) => t.workflowRunId);

    let current = first;
    for (const share of [0.25, 0.55]) {
      await until(
        `${share * 100} % of the steps executed`,
        () => readExecutions(logFile).length >= RUNS * STEPS * share,
      );
      current.child.kill('SIGKILL');
      expect((await current.exited).signal).toBe('SIGKILL');
      current = await spawnWfStart([...args, '--port', port], env, folder.dir);
      runners.push(current);
    }
    const results = await waitForRunsToEnd(() => current.url, CHAOS_TOKEN, ids, 90_000);
    const executions = readExecutions(logFile);
    expect(
      problems(results, executions, countResultMessages(dbPath)),
      `runner log tail:\n${current.stderr().slice(-2000)}`,
    ).toEqual([]);
    console.log(
      `chaos upstash kill-runner: ${JSON.stringify({ runs: RUNS, steps: RUNS * STEPS, executions: executions.length })}`,
    );
  }, 180_000);
});
