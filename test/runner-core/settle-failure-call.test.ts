import { describe, expect, it } from 'vitest';
import type { SerializedError } from '../../protocol/errors.js';
import type { AttemptResult } from '../../runner-core/drive/attempt.js';
import { settleFailureCall } from '../../runner-core/run-end/settle-failure-call.js';
import type { Attempt, Run } from '../../runner-core/store/types.js';

const NOW = 1_700_000_000_000;
const HALF = (): number => 0.5;
const boom: SerializedError = { name: 'Error', message: 'boom' };
const refused: SerializedError = { name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:9', code: 'ECONNREFUSED' };
const policy = { baseMs: 1000, capMs: 30_000, horizonMs: 60_000 };

function failedRun(overrides: Partial<Run> = {}): Run {
  return {
    id: 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B',
    url: 'http://127.0.0.1:3000/workflow',
    status: 'failed',
    body: '{}',
    headers: {},
    createdAt: NOW - 1000,
    updatedAt: NOW - 10,
    finishedAt: NOW - 10,
    nextAt: NOW - 10,
    failures: 0,
    retries: 2,
    retryDelayMs: 100,
    stepsDone: 1,
    attempts: 6,
    output: null,
    error: boom,
    idempotencyKey: null,
    unreachableSince: null,
    failureCall: 'pending',
    failureCallAttempts: 0,
    ...overrides,
  };
}
const result = (end: AttemptResult['end']): AttemptResult => ({
  attempt: { seq: 7 } as Attempt,
  progressed: false,
  end,
});
const down: AttemptResult['end'] = { t: 'error', error: refused, retryable: true, unreachable: true };

describe('settleFailureCall', () => {
  it('done: delivered, nothing due, counted as an attempt of the run and of the call', () => {
    expect(
      settleFailureCall(failedRun({ failureCallAttempts: 2, failures: 1 }), result({ t: 'done' }), {
        now: NOW,
        random: HALF,
        unreachable: policy,
      }),
    ).toEqual({
      attempts: 7,
      failureCallAttempts: 3,
      failureCall: 'delivered',
      failures: 0,
      failureCallNextAt: null,
    });
  });

  it('the app unreachable: the call stays pending on the unreachable schedule, its retries untouched', () => {
    expect(
      settleFailureCall(failedRun({ failures: 1 }), result(down), { now: NOW, random: HALF, unreachable: policy }),
    ).toEqual({
      attempts: 7,
      failureCallAttempts: 1,
      unreachableSince: NOW,
      failureCallNextAt: NOW + 750,
    });
    const later = settleFailureCall(failedRun({ unreachableSince: NOW - 8000 }), result(down), {
      now: NOW,
      random: HALF,
      unreachable: policy,
    });
    expect(later).toMatchObject({ unreachableSince: NOW - 8000, failureCallNextAt: NOW + 6000 });
    expect(later).not.toHaveProperty('failureCall');
  });

  it('unreachable past the horizon: the call is given up, the run keeps the error that failed it', () => {
    const patch = settleFailureCall(failedRun({ unreachableSince: NOW - 60_000 }), result(down), {
      now: NOW,
      random: HALF,
      unreachable: policy,
    });
    expect(patch).toEqual({ attempts: 7, failureCallAttempts: 1, failureCall: 'failed', failureCallNextAt: null });
  });

  it('the failureFunction threw: retried with the run policy (failures count), then failed', () => {
    const threw: AttemptResult['end'] = { t: 'failed', error: boom, retryable: true };
    const table: [failures: number, expected: object][] = [
      [0, { failures: 1, failureCallNextAt: NOW + 75 }],
      [1, { failures: 2, failureCallNextAt: NOW + 150 }],
      [2, { failures: 3, failureCall: 'failed', failureCallNextAt: null }],
    ];
    for (const [failures, expected] of table) {
      expect(
        settleFailureCall(failedRun({ failures }), result(threw), { now: NOW, random: HALF, unreachable: policy }),
        `after ${failures} failures`,
      ).toEqual({
        attempts: 7,
        failureCallAttempts: 1,
        ...expected,
      });
    }
  });

  it('an answer after an outage ends it; a Retry-After sets the delay', () => {
    const patch = settleFailureCall(
      failedRun({ unreachableSince: NOW - 5000 }),
      result({ t: 'error', error: boom, retryable: true, retryAfterMs: 2000 }),
      { now: NOW, random: HALF, unreachable: policy },
    );
    expect(patch).toEqual({
      attempts: 7,
      failureCallAttempts: 1,
      unreachableSince: null,
      failures: 1,
      failureCallNextAt: NOW + 2000,
    });
  });

  it('no retry can fix it (a 4xx, a non-retryable throw, a line a failure call cannot answer): failed at once', () => {
    const ends: AttemptResult['end'][] = [
      { t: 'error', error: boom, retryable: false },
      { t: 'failed', error: boom, retryable: false },
      { t: 'continue' },
    ];
    for (const end of ends) {
      expect(
        settleFailureCall(failedRun(), result(end), { now: NOW, random: HALF, unreachable: policy }),
        end.t,
      ).toEqual({
        attempts: 7,
        failureCallAttempts: 1,
        failureCall: 'failed',
        failures: 1,
        failureCallNextAt: null,
      });
    }
  });
});

describe('refusedStarts', () => {
  it('counts the started lines per step, nothing else', async () => {
    const { refusedStarts } = await import('../../runner-core/drive/refused-starts.js');
    const id = failedRun().id;
    const started = (index: number) => ({
      type: 'step-started' as const,
      runId: id,
      index,
      name: `s${index}`,
      kind: 'run' as const,
      group: null,
      at: NOW,
    });
    expect(
      refusedStarts([
        started(0),
        started(1),
        started(0),
        { type: 'step-succeeded', runId: id, index: 0, name: 's0', kind: 'run', output: null, at: NOW, durationMs: 1 },
      ]),
    ).toEqual([
      { type: 'executions-reported', runId: id, index: 0, count: 2 },
      { type: 'executions-reported', runId: id, index: 1, count: 1 },
    ]);
    expect(refusedStarts([])).toEqual([]);
  });
});
