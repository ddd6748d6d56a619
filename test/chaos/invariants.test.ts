import { describe, expect, it } from 'vitest';
import { encodeValue } from '../../protocol/values.js';
import type { Run, Step } from '../../api/dto.js';
import type { ExecutionLine } from '../helpers/app-process.js';
import { brokenInvariants, reExecutions, type RunResult } from './invariants.js';

/** The chaos suites' checks themselves: each broken invariant is reported (a check that cannot fail proves nothing). */

const ID = 'wfr_01M85AXESBGS0XX31E4636HYM0';

/** Only the fields the invariants read, so the test does not depend on the rest of the record. */
function step(index: number, output: string, finishedAt: number, status: Step['status'] = 'succeeded'): Step {
  const fields: Pick<Step, 'runId' | 'index' | 'name' | 'kind' | 'status' | 'outputEncoded' | 'finishedAt'> = {
    runId: ID,
    index,
    name: `step-${index}`,
    kind: 'run',
    status,
    outputEncoded: encodeValue(output, 'test') ?? null,
    finishedAt,
  };
  return fields as Step;
}

function execution(index: number, exec: string, start: number): ExecutionLine[] {
  return [
    { e: 'start', runId: ID, index, exec, at: start, pid: 1 },
    { e: 'end', runId: ID, index, exec, at: start + 5, output: `${ID}:${index}:${exec}`, pid: 1 },
  ];
}

function result(status: Run['status'], steps: Step[]): Map<string, RunResult> {
  const run = { id: ID, status, finishedAt: 1_000, error: null } as Run;
  return new Map([[ID, { run, steps }]]);
}

describe('chaos invariants', () => {
  const good = [step(0, `${ID}:0:a`, 100), step(1, `${ID}:1:b`, 200)];
  const ran = [...execution(0, 'a', 90), ...execution(1, 'b', 190)];

  it('hold for a completed run whose steps each committed one real execution', () => {
    expect(brokenInvariants(result('completed', good), () => 2, ran)).toEqual([]);
  });

  it('report a run that did not complete, a missing step and an output no execution produced', () => {
    expect(brokenInvariants(result('failed', good), () => 2, ran)).toEqual([
      `${ID}: failed, expected completed (2/2 steps succeeded)`,
    ]);
    expect(brokenInvariants(result('completed', good.slice(0, 1)), () => 2, ran)).toHaveLength(2);
    expect(brokenInvariants(result('completed', [good[0]!, step(1, `${ID}:1:forged`, 200)]), () => 2, ran)).toEqual([
      `${ID} step 1: committed output "${ID}:1:forged" is no execution's output (1 executions ended)`,
    ]);
  });

  it('report an execution that started after the step was committed, and count re-executions', () => {
    const again = [...ran, ...execution(0, 'late', 150)];
    expect(brokenInvariants(result('completed', good), () => 2, again)).toEqual([
      `${ID} step 0: executed again (late, app pid 1) 50 ms after its result was committed`,
    ]);
    expect(reExecutions(again)).toBe(1);
  });
});
