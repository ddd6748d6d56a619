import { describe, expect, it } from 'vitest';
import type { Step } from '../../api/dto.js';
import { newerStep, stepProgress } from '../../view/progress.js';
import { step } from './records.js';

/** A step's life: started, failed (retrying), started again, succeeded. */
const life: Partial<Step>[] = [
  { status: 'running', reportedExecutions: 1 },
  { status: 'retrying', reportedExecutions: 1, failures: 1, finishedAt: 2 },
  { status: 'running', reportedExecutions: 2, failures: 1 },
  { status: 'succeeded', reportedExecutions: 2, failures: 1, finishedAt: 4 },
];

describe('newerStep', () => {
  it('rises with every transition of a step', () => {
    const values = life.map((patch) => stepProgress(step(patch)));
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(values.length);
  });

  it.each(life.flatMap((a, i) => life.map((b, j) => [i, j, a, b] as const)))(
    'held #%i vs incoming #%i',
    (i, j, a, b) => {
      const held = step(a);
      const incoming = step(b);
      expect(newerStep(held, incoming)).toBe(j >= i ? incoming : held);
    },
  );

  it.each<[string, Partial<Step>, Partial<Step>, 'held' | 'incoming']>([
    // reportedExecutions is a lower bound: a retry whose `started` line was lost still fails once more.
    [
      'a failure whose started line was lost',
      { status: 'retrying', failures: 2, finishedAt: 3 },
      { status: 'retrying', failures: 1, finishedAt: 2 },
      'held',
    ],
    [
      'a cancel while waiting to retry (only the status differs)',
      { status: 'cancelled', failures: 1, finishedAt: 2 },
      { status: 'retrying', failures: 1, finishedAt: 2 },
      'held',
    ],
    [
      'an equal copy with new bodies',
      { status: 'succeeded', finishedAt: 2 },
      { status: 'succeeded', finishedAt: 2, outputEncoded: '[1]' },
      'incoming',
    ],
  ])('%s: keeps the %s', (_name, a, b, winner) => {
    const held = step(a);
    const incoming = step(b);
    expect(newerStep(held, incoming)).toBe(winner === 'held' ? held : incoming);
    expect(newerStep(undefined, incoming)).toBe(incoming);
  });
});
