import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../protocol/outcome.js';
import { attemptsForStep, indexesOf, isLineOf, outcomeLines, stepIndexesOf } from '../../view/attempts.js';
import { attempt } from './records.js';

const started = (index: number): Outcome => ({ t: 'started', index, name: `s${index}`, kind: 'run', group: 0 });
const finished = (index: number): Outcome => ({ t: 'step', index, name: `s${index}`, kind: 'run', output: '[1]', durationMs: 1 });
const boom = { name: 'Error', message: 'boom' };

describe('indexesOf', () => {
  it.each<[string, Outcome, number[]]>([
    ['started', started(3), [3]],
    ['step', finished(4), [4]],
    ['failed in a step', { t: 'failed', error: boom, retryable: true, step: { index: 2, name: 's2', kind: 'run', durationMs: 1 } }, [2]],
    ['failed outside any step', { t: 'failed', error: boom, retryable: false }, []],
    [
      'suspend',
      { t: 'suspend', steps: [{ kind: 'sleep', index: 1, name: 'nap', group: 1, until: 5 }, { kind: 'wait', index: 2, name: 'ev', group: 1, eventId: 'e', until: 9 }] },
      [1, 2],
    ],
    ['done', { t: 'done', output: '[1]' }, []],
    ['continue', { t: 'continue' }, []],
    ['cancel', { t: 'cancel' }, []],
  ])('%s', (_name, outcome, indexes) => expect(indexesOf(outcome)).toEqual(indexes));
});

describe('which attempts concern a step', () => {
  const attempts = [
    attempt(1, [started(0), finished(0), { t: 'suspend', steps: [{ kind: 'sleep', index: 1, name: 'nap', group: 1, until: 5 }] }]),
    attempt(2, [{ t: 'failed', error: boom, retryable: true, step: { index: 2, name: 's2', kind: 'run', durationMs: 1 } }]),
    // A cut stream: the half line is shown but speaks of nothing.
    attempt(3, [started(3)], '{"t":"step","index":3,"na'),
    { ...attempt(4, []), responseBody: 'not ndjson' },
    { ...attempt(5, []), responseBody: null },
  ];

  it.each([
    [0, [1]],
    [1, [1]],
    [2, [2]],
    [3, [3]],
    [4, []],
  ])('step %i: attempts %j', (index, seqs) => expect(attemptsForStep(attempts, index).map((a) => a.seq)).toEqual(seqs));

  it('reads lines through decodeOutcome: a JSON line that is not a valid outcome speaks of nothing', () => {
    const forged = { ...attempt(6, []), responseBody: '{"t":"started","index":0}\n' };
    expect(stepIndexesOf(forged).size).toBe(0);
  });

  it("marks the step's own lines and keeps every line's text", () => {
    const lines = outcomeLines(attempts[2]!);
    expect(lines.map((l) => l.text)).toEqual([JSON.stringify(started(3)), '{"t":"step","index":3,"na']);
    expect(lines.map((l) => isLineOf(l, 3))).toEqual([true, false]);
    expect(outcomeLines(attempts[2]!)).toBe(lines);
  });
});
