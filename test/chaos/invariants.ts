import { decodeValue } from '../../protocol/values.js';
import type { Run, Step } from '../../api/dto.js';
import type { ExecutionLine } from '../helpers/app-process.js';

/**
 * What every chaos scenario asserts once its runs have ended:
 * 1. every accepted run reached `completed`;
 * 2. each step has exactly one committed result: one `succeeded` step per position, and its output
 *    is the output of one real execution the app recorded (outputs are unique per execution);
 * 3. no step executed after its result was committed: no execution recorded by the app started
 *    after the step's committed `finishedAt`.
 * Clocks: `finishedAt` is the runner's `Date.now()` when the step's line arrived (before the commit
 * is durable, so the check errs on the lenient side), and execution times are the app's `Date.now()`;
 * both processes read the same host clock (CLOCK_REALTIME), so they compare without skew.
 */

export interface RunResult {
  run: Run;
  steps: Step[];
}

/** `GET /v1/runs/:id` from the runner API. */
export async function fetchRun(runnerUrl: string, token: string, id: string): Promise<RunResult> {
  const response = await fetch(`${runnerUrl}/v1/runs/${id}`, { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200)
    throw new Error(`GET /v1/runs/${id} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as RunResult;
}

/**
 * Polls every run until each has finished (any final status) or `timeoutMs` passes; a runner that
 * is down or restarting is asked again. Resolves with the last state of every run either way, so the
 * invariants report what did not finish.
 */
export async function waitForRunsToEnd(
  runnerUrl: () => string,
  token: string,
  ids: readonly string[],
  timeoutMs: number,
): Promise<Map<string, RunResult | undefined>> {
  const results = new Map<string, RunResult | undefined>(ids.map((id) => [id, undefined]));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = ids.filter((id) => results.get(id)?.run.finishedAt == null);
    if (open.length === 0) return results;
    await Promise.all(
      open.map(async (id) => {
        try {
          results.set(id, await fetchRun(runnerUrl(), token, id));
        } catch {} // down or restarting: ask again next round
      }),
    );
    if (Date.now() > deadline) return results;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Every broken invariant, one line each (empty when all hold). */
export function brokenInvariants(
  results: Map<string, RunResult | undefined>,
  stepsOf: (id: string) => number,
  executions: readonly ExecutionLine[],
): string[] {
  const problems: string[] = [];
  const byStep = new Map<string, ExecutionLine[]>();
  for (const line of executions) {
    const key = `${line.runId}#${line.index}`;
    byStep.set(key, [...(byStep.get(key) ?? []), line]);
  }
  for (const [id, result] of results) {
    if (!result) {
      problems.push(`${id}: never read from the runner`);
      continue;
    }
    const { run, steps } = result;
    const completed = run.status === 'completed';
    if (!completed) {
      const done = steps.filter((s) => s.status === 'succeeded').length;
      problems.push(
        `${id}: ${run.status}, expected completed (${done}/${stepsOf(id)} steps succeeded${run.error ? `; ${run.error.message}` : ''})`,
      );
    }
    const expected = stepsOf(id);
    for (let index = 0; index < expected; index++) {
      const committed = steps.filter((s) => s.index === index);
      // An unfinished run is reported once above; its committed steps are still checked below.
      if (!completed && committed[0]?.status !== 'succeeded') continue;
      if (committed.length !== 1 || committed[0]!.status !== 'succeeded') {
        problems.push(
          `${id} step ${index}: expected one succeeded result, got ${JSON.stringify(committed.map((s) => s.status))}`,
        );
        continue;
      }
      const step = committed[0]!;
      const lines = byStep.get(`${id}#${index}`) ?? [];
      // The faithful value the API serves beside the readable one (outputs here are strings either way).
      const output = decodeValue(step.outputEncoded ?? undefined);
      if (!lines.some((l) => l.e === 'end' && l.output === output)) {
        problems.push(
          `${id} step ${index}: committed output ${JSON.stringify(output)} is no execution's output (${lines.filter((l) => l.e === 'end').length} executions ended)`,
        );
      }
      for (const late of lines.filter((l) => l.e === 'start' && step.finishedAt !== null && l.at > step.finishedAt)) {
        problems.push(
          `${id} step ${index}: executed again (${late.exec}, app pid ${late.pid}) ${late.at - step.finishedAt!} ms after its result was committed`,
        );
      }
    }
    if (completed && steps.length !== expected)
      problems.push(`${id}: ${steps.length} step records, expected ${expected}`);
  }
  return problems;
}

/** Executions beyond one per step: the at-least-once re-executions, for the report. */
export function reExecutions(executions: readonly ExecutionLine[]): number {
  const keys = new Set<string>();
  let starts = 0;
  for (const line of executions) {
    if (line.e !== 'start') continue;
    starts++;
    keys.add(`${line.runId}#${line.index}`);
  }
  return starts - keys.size;
}
