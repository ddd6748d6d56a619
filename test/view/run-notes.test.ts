import { describe, expect, it } from 'vitest';
import { runNotes } from '../../view/run-notes.js';
import type { Run } from '../../api/dto.js';

const T0 = 1_700_000_000_000;
const time = (ms: number): string => `t+${(ms - T0) / 1000}s`;
function run(overrides: Partial<Run>): Run {
  return {
    id: 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B',
    url: 'http://127.0.0.1:3000/workflow',
    status: 'running',
    body: '{}',
    headers: {},
    createdAt: T0,
    updatedAt: T0,
    finishedAt: null,
    nextAt: null,
    failures: 0,
    retries: 3,
    retryDelayMs: 1000,
    stepsDone: 0,
    attempts: 1,
    outputEncoded: null,
    error: null,
    idempotencyKey: null,
    unreachableSince: null,
    failureCall: null,
    failureCallAttempts: 0,
    ...overrides,
  };
}

describe('runNotes', () => {
  it.each<[string, Partial<Run>, string[]]>([
    ['nothing to say', {}, []],
    [
      'app unreachable',
      { unreachableSince: T0 + 1000, nextAt: T0 + 9000 },
      ['warn app unreachable since t+1s, next try at t+9s'],
    ],
    ['unreachable, nothing scheduled', { unreachableSince: T0 + 1000 }, ['warn app unreachable since t+1s']],
    ['a finished run shows no stale outage', { status: 'completed', finishedAt: T0 + 5, unreachableSince: T0 }, []],
    [
      'failure call owed, not sent',
      { status: 'failed', finishedAt: T0, failureCall: 'pending', nextAt: T0 },
      ['warn failureFunction pending (not sent yet, next try at t+0s)'],
    ],
    [
      'failure call waiting for the app',
      {
        status: 'failed',
        finishedAt: T0,
        failureCall: 'pending',
        failureCallAttempts: 3,
        unreachableSince: T0 + 1000,
        nextAt: T0 + 4000,
      },
      ['warn app unreachable since t+1s, next try at t+4s', 'warn failureFunction pending (3 attempts)'],
    ],
    [
      'delivered',
      { status: 'failed', finishedAt: T0, failureCall: 'delivered', failureCallAttempts: 1 },
      ['ok failureFunction delivered (1 attempt)'],
    ],
    [
      'waiting for a flow control slot',
      { status: 'queued', flowKey: 'tenant-42', queuedReason: 'flow control `tenant-42`: 5 of 5 running' },
      ['warn waiting: flow control `tenant-42`: 5 of 5 running'],
    ],
    [
      'given up',
      { status: 'failed', finishedAt: T0, failureCall: 'failed', failureCallAttempts: 4 },
      ['error failureFunction not delivered: gave up after 4 attempts'],
    ],
    [
      'alert owed, not sent',
      { status: 'failed', finishedAt: T0, alert: 'pending', alertAttempts: 0, nextAt: T0 },
      ['warn alert pending (not sent yet, next try at t+0s)'],
    ],
    [
      'alert retried, the failureFunction call waiting for it',
      {
        status: 'failed',
        finishedAt: T0,
        alert: 'pending',
        alertAttempts: 2,
        nextAt: T0 + 3000,
        failureCall: 'pending',
      },
      [
        'warn alert pending (2 attempts, next try at t+3s)',
        'warn failureFunction pending (not sent yet, after the alert)',
      ],
    ],
    [
      'alert delivered',
      { status: 'failed', finishedAt: T0, alert: 'delivered', alertAttempts: 1 },
      ['ok alert delivered (1 attempt)'],
    ],
    [
      'alert given up',
      { status: 'failed', finishedAt: T0, alert: 'failed', alertAttempts: 9 },
      ['error alert not delivered: gave up after 9 attempts'],
    ],
  ])('%s', (_, overrides, expected) => {
    expect(runNotes(run(overrides), time).map((n) => `${n.tone} ${n.text}`)).toEqual(expected);
  });
});
