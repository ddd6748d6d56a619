import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import { readExecutions, type ExecutionLine } from '../helpers/app-process.js';
import type { SeededRandom } from '../helpers/seeded-random.js';

/** Shared pieces of the chaos scenarios: the runs they start and the progress they wait for. */

export const CHAOS_TOKEN = 'wf_chaos_test_token_0123456789';

/** What `wf start` needs besides its flags: the token, and the origins it may call (loopback apps). */
export const RUNNER_ENV = { WF_TOKENS: CHAOS_TOKEN, WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*' };

/** The start payload of one run: its number (the fault proxy's key) and each step's duration. */
export interface RunPlan {
  n: number;
  stepMs: number[];
}

/** `count` runs of `steps` steps (inclusive range), each step `stepMs` long (inclusive range), from the seed. */
export function planRuns(
  random: SeededRandom,
  count: number,
  steps: [number, number],
  stepMs: [number, number],
): RunPlan[] {
  return Array.from({ length: count }, (_, n) => ({
    n,
    stepMs: Array.from({ length: random.between(...steps) }, () => random.between(...stepMs)),
  }));
}

/** Starts a run the way a client does (POST to the app's route); throws unless accepted. */
export async function startThroughApp(appUrl: string, plan: RunPlan): Promise<string> {
  const response = await fetch(appUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(plan),
  });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`Starting run ${plan.n} through ${appUrl} answered ${response.status}: ${text}`);
  return (JSON.parse(text) as { workflowRunId: string }).workflowRunId;
}

/** Starts a run on a runner directly (`POST /v1/runs`), as several-runner setups spread starts. */
export async function startOnRunner(runnerUrl: string, appUrl: string, plan: RunPlan): Promise<string> {
  const response = await fetch(`${runnerUrl}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CHAOS_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: appUrl, body: JSON.stringify(plan), headers: {} }),
  });
  const text = await response.text();
  if (response.status !== 201)
    throw new Error(`POST ${runnerUrl}/v1/runs for run ${plan.n} answered ${response.status}: ${text}`);
  return (JSON.parse(text) as { workflowRunId: string }).workflowRunId;
}

/** Waits until the app's execution log satisfies `ready` (bounded); the lines it saw. */
export async function untilExecutions(
  logFile: string,
  ready: (lines: ExecutionLine[]) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<ExecutionLine[]> {
  let lines: ExecutionLine[] = [];
  try {
    return await vi.waitFor(
      () => {
        lines = readExecutions(logFile);
        if (!ready(lines)) throw new Error('not yet');
        return lines;
      },
      { timeout: timeoutMs, interval: 20 },
    );
  } catch {
    throw new Error(`The app's executions did not reach "${what}" within ${timeoutMs} ms: ${lines.length} log lines.`);
  }
}

/** Runs with at least one step started and not every step ended: in flight. */
export function runsInFlight(lines: readonly ExecutionLine[], plans: Map<string, RunPlan>): number {
  const ended = new Map<string, Set<number>>();
  const started = new Set<string>();
  for (const line of lines) {
    started.add(line.runId);
    if (line.e === 'end') ended.set(line.runId, (ended.get(line.runId) ?? new Set()).add(line.index));
  }
  return [...started].filter((id) => (ended.get(id)?.size ?? 0) < (plans.get(id)?.stepMs.length ?? 0)).length;
}

/** Share of all planned steps that have ended at least once. */
export function shareEnded(lines: readonly ExecutionLine[], plans: readonly RunPlan[]): number {
  const total = plans.reduce((sum, p) => sum + p.stepMs.length, 0);
  const ended = new Set(lines.filter((l) => l.e === 'end').map((l) => `${l.runId}#${l.index}`));
  return ended.size / total;
}

/** A temp folder, removed by the returned function. */
export function tempFolder(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
