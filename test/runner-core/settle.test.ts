import { describe, expect, it } from 'vitest';
import type { SerializedError } from '../../protocol/errors.js';
import type { AttemptResult } from '../../runner-core/drive/attempt.js';
import { settle } from '../../runner-core/drive/settle.js';
import type { Attempt, Run } from '../../runner-core/store/types.js';

const NOW = 1_700_000_000_000;
const HALF = (): number => 0.5;
const boom: SerializedError = { name: 'Error', message: 'boom', stack: 'Error: boom\n    at step' };

function run(overrides: Partial<Run> = {}): Run {
  return {
    id: 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B',
    url: 'http://127.0.0.1:3000/workflow',
    status: 'running',
    body: '{}',
    headers: {},
    createdAt: NOW - 1000,
    updatedAt: NOW - 1000,
    finishedAt: null,
    nextAt: NOW - 10,
    failures: 0,
    retries: 3,
    retryDelayMs: 100,
    stepsDone: 0,
    attempts: 4,
    output: null,
    error: null,
    idempotencyKey: null,
    unreachableSince: null,
    failureCall: null,
    failureCallAttempts: 0,
    ...overrides,
  };
}

// The route answered, without `wf-failure-function: 1`: it has no failureFunction.
const attempt = { runId: 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B', seq: 5, responseHeaders: {} } as Attempt;
const result = (
  end: AttemptResult['end'],
  progressed = false,
  headers: Record<string, string> | null = {},
): AttemptResult => ({
  attempt: { ...attempt, responseHeaders: headers },
  progressed,
  end,
});
const step = { index: 2, name: 'charge', kind: 'run' as const, durationMs: 7 };
const stepFailed = (status: 'retrying' | 'failed') => ({
  type: 'step-failed',
  runId: run().id,
  index: 2,
  name: 'charge',
  kind: 'run',
  error: boom,
  status,
  at: NOW,
  durationMs: 7,
});

describe('settle', () => {
  it('done: completes the run with its output and clears the schedule', () => {
    expect(settle(run({ failures: 2 }), result({ t: 'done', output: '"ok"' }), { now: NOW, random: HALF })).toEqual({
      changes: [],
      patch: {
        attempts: 5,
        status: 'completed',
        output: '"ok"',
        finishedAt: NOW,
        nextAt: null,
        failures: 0,
        unreachableSince: null,
      },
    });
    expect(settle(run(), result({ t: 'done' }), { now: NOW, random: HALF }).patch.output).toBeNull();
  });

  it('continue: due again at once, failures reset', () => {
    expect(settle(run({ failures: 1 }), result({ t: 'continue' }, true), { now: NOW, random: HALF })).toEqual({
      changes: [],
      patch: { attempts: 5, status: 'running', nextAt: NOW, failures: 0 },
    });
  });

  it('a retryable step failure with retries left marks the step retrying and schedules the backoff', () => {
    // failure 1 of base 100: 50 fixed + 0.5 · 50 random.
    expect(
      settle(run(), result({ t: 'failed', error: boom, retryable: true, step }), { now: NOW, random: HALF }),
    ).toEqual({
      changes: [stepFailed('retrying')],
      patch: { attempts: 5, status: 'running', failures: 1, nextAt: NOW + 75 },
    });
    // failure 3 of base 100: 200 fixed + 0.5 · 200 random; the last retry still retries.
    const third = settle(run({ failures: 2 }), result({ t: 'failed', error: boom, retryable: true, step }), {
      now: NOW,
      random: HALF,
    });
    expect(third.patch).toEqual({ attempts: 5, status: 'running', failures: 3, nextAt: NOW + 300 });
    expect(third.changes).toEqual([stepFailed('retrying')]);
  });

  it('retries exhausted: the step fails for good and the run is driven once more, at once', () => {
    // The replay rethrows the error into the workflow (StepFailedError), which may catch it.
    expect(
      settle(run({ failures: 3 }), result({ t: 'failed', error: boom, retryable: true, step }), {
        now: NOW,
        random: HALF,
      }),
    ).toEqual({
      changes: [stepFailed('failed')],
      patch: { attempts: 5, status: 'running', failures: 0, nextAt: NOW },
    });
  });

  it('no retries configured: the first failure fails the step for good', () => {
    const { changes, patch } = settle(
      run({ retries: 0 }),
      result({ t: 'failed', error: boom, retryable: true, step }),
      { now: NOW, random: HALF },
    );
    expect(changes).toEqual([stepFailed('failed')]);
    expect(patch).toEqual({ attempts: 5, status: 'running', failures: 0, nextAt: NOW });
  });

  it('a non-retryable step failure fails the step at once, with every retry left, and drives again', () => {
    expect(
      settle(run(), result({ t: 'failed', error: boom, retryable: false, step }), { now: NOW, random: HALF }),
    ).toEqual({
      changes: [stepFailed('failed')],
      patch: { attempts: 5, status: 'running', failures: 0, nextAt: NOW },
    });
  });

  it("a step's own retries win over the run's, both ways", () => {
    const more = { ...step, retries: 5 };
    const fourth = settle(run({ failures: 3 }), result({ t: 'failed', error: boom, retryable: true, step: more }), {
      now: NOW,
      random: HALF,
    });
    expect(fourth.changes).toEqual([stepFailed('retrying')]);
    expect(fourth.patch).toMatchObject({ status: 'running', failures: 4 });
    const none = { ...step, retries: 0 };
    const first = settle(run({ retries: 10 }), result({ t: 'failed', error: boom, retryable: true, step: none }), {
      now: NOW,
      random: HALF,
    });
    expect(first.changes).toEqual([stepFailed('failed')]);
    expect(first.patch).toEqual({ attempts: 5, status: 'running', failures: 0, nextAt: NOW });
  });

  it("a step's own retryDelayMs is the backoff base instead of the run's", () => {
    // failure 2 of base 1000: 1000 fixed + 0.5 · 1000 random (the run's base 100 would give 150).
    const own = { ...step, retryDelayMs: 1000 };
    expect(
      settle(run({ failures: 1 }), result({ t: 'failed', error: boom, retryable: true, step: own }), {
        now: NOW,
        random: HALF,
      }).patch.nextAt,
    ).toBe(NOW + 1500);
  });

  it('honours retryAfterMs instead of the backoff', () => {
    const end = { t: 'failed' as const, error: boom, retryable: true, retryAfterMs: 5000, step };
    expect(settle(run({ failures: 2 }), result(end), { now: NOW, random: HALF }).patch.nextAt).toBe(NOW + 5000);
    expect(settle(run(), result({ ...end, retryAfterMs: 0 }), { now: NOW, random: HALF }).patch.nextAt).toBe(NOW);
  });

  it('progress in the attempt resets the failure counter', () => {
    // Three failures in a row would exhaust 3 retries, but this attempt committed a step first.
    const { patch } = settle(run({ failures: 3 }), result({ t: 'failed', error: boom, retryable: true, step }, true), {
      now: NOW,
      random: HALF,
    });
    expect(patch).toEqual({ attempts: 5, status: 'running', failures: 1, nextAt: NOW + 75 });
  });

  it('a final workflow failure outside any step fails the run and closes the steps still open', () => {
    // E.g. the rethrown StepFailedError the workflow did not catch: retryable false, no step.
    const { changes, patch } = settle(run(), result({ t: 'failed', error: boom, retryable: false }), {
      now: NOW,
      random: HALF,
    });
    expect(changes).toEqual([{ type: 'steps-closed', runId: run().id, status: 'failed', at: NOW }]);
    expect(patch).toEqual({ attempts: 5, status: 'failed', failures: 1, error: boom, finishedAt: NOW, nextAt: null });
  });

  it('a retryable workflow failure outside any step is retried, no step touched', () => {
    const { changes, patch } = settle(run(), result({ t: 'failed', error: boom, retryable: true }), {
      now: NOW,
      random: HALF,
    });
    expect(changes).toEqual([]);
    expect(patch).toEqual({ attempts: 5, status: 'running', failures: 1, nextAt: NOW + 75 });
  });

  it('cancel: the run ends cancelled, with its open steps', () => {
    expect(settle(run(), result({ t: 'cancel' }), { now: NOW, random: HALF })).toEqual({
      changes: [{ type: 'steps-closed', runId: run().id, status: 'cancelled', at: NOW }],
      patch: { attempts: 5, status: 'cancelled', finishedAt: NOW, nextAt: null },
    });
  });

  it('suspend: records each sleep, wait and call with its group, and stays due now for the runner to resolve', () => {
    const request = { url: 'http://127.0.0.1:9/x', method: 'POST', headers: {}, body: '{}' };
    const { changes, patch } = settle(
      run({ failures: 2 }),
      result({
        t: 'suspend',
        steps: [
          { kind: 'sleep', index: 3, name: 'nap', group: 4, until: NOW + 300 },
          { kind: 'wait', index: 4, name: 'approval', group: 4, eventId: 'order-1', until: NOW + 60_000 },
          { kind: 'call', index: 5, name: 'charge', group: 4, request },
        ],
      }),
      { now: NOW, random: HALF },
    );
    const base = { type: 'step-suspended', runId: run().id, group: 4, at: NOW };
    expect(changes).toEqual([
      { ...base, index: 3, name: 'nap', kind: 'sleep', until: NOW + 300, eventId: null, request: null },
      { ...base, index: 4, name: 'approval', kind: 'wait', until: NOW + 60_000, eventId: 'order-1', request: null },
      { ...base, index: 5, name: 'charge', kind: 'call', until: null, eventId: null, request },
    ]);
    expect(patch).toEqual({ attempts: 5, status: 'running', nextAt: NOW, failures: 0 });
  });

  describe('errors the app answered (500, 4xx)', () => {
    const refused: SerializedError = {
      name: 'EndpointError',
      message: 'Endpoint POST http://127.0.0.1:9 responded 500',
    };

    it('retryable: retried with backoff, or with the Retry-After delay, no step touched', () => {
      const { changes, patch } = settle(run(), result({ t: 'error', error: refused, retryable: true }), {
        now: NOW,
        random: HALF,
      });
      expect(changes).toEqual([]);
      expect(patch).toEqual({ attempts: 5, status: 'running', failures: 1, nextAt: NOW + 75 });
      const later = settle(run(), result({ t: 'error', error: refused, retryable: true, retryAfterMs: 2000 }), {
        now: NOW,
        random: HALF,
      });
      expect(later.patch.nextAt).toBe(NOW + 2000);
    });

    it('not retryable, or retries exhausted: the run fails with the transport error and closes its open steps', () => {
      const closed = [{ type: 'steps-closed', runId: run().id, status: 'failed', at: NOW }];
      const once = settle(run(), result({ t: 'error', error: refused, retryable: false }), { now: NOW, random: HALF });
      expect(once.patch).toEqual({
        attempts: 5,
        status: 'failed',
        failures: 1,
        error: refused,
        finishedAt: NOW,
        nextAt: null,
      });
      expect(once.changes).toEqual(closed);
      const exhausted = settle(run({ failures: 3 }), result({ t: 'error', error: refused, retryable: true }), {
        now: NOW,
        random: HALF,
      });
      expect(exhausted.patch.status).toBe('failed');
      expect(exhausted.changes).toEqual(closed);
    });
  });
});

describe('settle: a failed run and its failureFunction call', () => {
  const closed = [{ type: 'steps-closed', runId: run().id, status: 'failed', at: NOW }];
  const final = { t: 'failed' as const, error: boom, retryable: false };

  it('the route says it has a failureFunction: failed, with the call pending and due now, its counters from zero', () => {
    const { changes, patch } = settle(run({ failures: 2 }), result(final, false, { 'wf-failure-function': '1' }), {
      now: NOW,
      random: HALF,
    });
    expect(changes).toEqual(closed);
    expect(patch).toEqual({
      attempts: 5,
      status: 'failed',
      error: boom,
      finishedAt: NOW,
      nextAt: NOW,
      failureCall: 'pending',
      failureCallAttempts: 0,
      failureCallNextAt: NOW,
      failures: 0,
      unreachableSince: null,
    });
  });

  it('with an alert webhook the failing commit owes the alert too, each delivery on its own schedule', () => {
    const { patch } = settle(run(), result(final, false, { 'wf-failure-function': '1' }), {
      now: NOW,
      random: HALF,
      alerts: true,
    });
    expect(patch).toMatchObject({
      status: 'failed',
      nextAt: NOW,
      failureCall: 'pending',
      failureCallNextAt: NOW,
      alert: 'pending',
      alertAttempts: 0,
      alertNextAt: NOW,
    });
    // Without a failureFunction the alert alone keeps the run claimable.
    const alone = settle(run(), result(final), { now: NOW, random: HALF, alerts: true }).patch;
    expect(alone).toMatchObject({ alert: 'pending', alertNextAt: NOW, nextAt: NOW });
    expect(alone).not.toHaveProperty('failureCall');
  });

  it('no answer at all (the app never answered): the call is owed anyway', () => {
    expect(settle(run(), result(final, false, null), { now: NOW, random: HALF }).patch).toMatchObject({
      status: 'failed',
      failureCall: 'pending',
      nextAt: NOW,
    });
  });

  it('the route answered without the header: no call, nothing due', () => {
    const { patch } = settle(run(), result(final), { now: NOW, random: HALF });
    expect(patch.failureCall).toBeUndefined();
    expect(patch.nextAt).toBeNull();
  });
});

describe('settle: the app unreachable', () => {
  const refused: SerializedError = { name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:9', code: 'ECONNREFUSED' };
  const down = (extra: { retryAfterMs?: number } = {}): AttemptResult['end'] => ({
    t: 'error',
    error: refused,
    retryable: true,
    unreachable: true,
    ...extra,
  });
  const policy = { baseMs: 1000, capMs: 30_000, horizonMs: 60_000 };

  it('first failure: the outage starts now, the next try after the base delay, failures untouched', () => {
    const { changes, patch } = settle(run({ failures: 2 }), result(down(), false, null), {
      now: NOW,
      random: HALF,
      unreachable: policy,
    });
    expect(changes).toEqual([]);
    // base 1000: 500 fixed + 0.5 · 500 random.
    expect(patch).toEqual({ attempts: 5, status: 'running', unreachableSince: NOW, nextAt: NOW + 750 });
  });

  it('later failures keep the outage start; the delay grows with the outage, up to the cap', () => {
    const table: [elapsed: number, delay: number][] = [
      [0, 750],
      [400, 750],
      [4_000, 3_000],
      [20_000, 15_000],
      [50_000, 22_500],
    ];
    for (const [elapsed, delay] of table) {
      const { patch } = settle(run({ unreachableSince: NOW - elapsed }), result(down(), false, null), {
        now: NOW,
        random: HALF,
        unreachable: policy,
      });
      expect(patch, `after ${elapsed} ms`).toEqual({
        attempts: 5,
        status: 'running',
        unreachableSince: NOW - elapsed,
        nextAt: NOW + delay,
      });
    }
  });

  it('jitter spreads the tries between half the span and the whole span', () => {
    const at = (random: number): number | null | undefined =>
      settle(run({ unreachableSince: NOW - 8000 }), result(down()), {
        now: NOW,
        random: () => random,
        unreachable: policy,
      }).patch.nextAt;
    expect([at(0), at(1)]).toEqual([NOW + 4000, NOW + 8000]);
  });

  it("a 503's Retry-After sets the delay, within the cap", () => {
    expect(
      settle(run(), result(down({ retryAfterMs: 5000 })), { now: NOW, random: HALF, unreachable: policy }).patch.nextAt,
    ).toBe(NOW + 5000);
    expect(
      settle(run(), result(down({ retryAfterMs: 3_600_000 })), { now: NOW, random: HALF, unreachable: policy }).patch
        .nextAt,
    ).toBe(NOW + 30_000);
  });

  it('past the horizon: the run fails, saying since when the app was unreachable, and still owes its failureFunction call', () => {
    const since = NOW - 60_000;
    const { changes, patch } = settle(run({ unreachableSince: since, failures: 1 }), result(down(), false, null), {
      now: NOW,
      random: HALF,
      unreachable: policy,
    });
    expect(changes).toEqual([{ type: 'steps-closed', runId: run().id, status: 'failed', at: NOW }]);
    expect(patch).toMatchObject({
      status: 'failed',
      finishedAt: NOW,
      nextAt: NOW,
      failureCall: 'pending',
      unreachableSince: null,
      failures: 0,
    });
    expect(patch.error).toMatchObject({ name: 'AppUnreachableError', code: 'APP_UNREACHABLE' });
    expect(patch.error?.message).toContain(`unreachable since ${new Date(since).toISOString()} (1 min)`);
    expect(patch.error?.message).toContain('horizon of 1 min');
    expect(patch.error?.message).toContain('ECONNREFUSED');
  });

  it('a stream cut after progress starts the outage again now; without progress it keeps its start (the horizon still comes)', () => {
    const was = run({ unreachableSince: NOW - 50_000 });
    expect(settle(was, result(down(), true), { now: NOW, random: HALF, unreachable: policy }).patch).toMatchObject({
      status: 'running',
      unreachableSince: NOW,
      nextAt: NOW + 750,
    });
    expect(settle(was, result(down(), false), { now: NOW, random: HALF, unreachable: policy }).patch).toMatchObject({
      unreachableSince: NOW - 50_000,
    });
  });

  it('any answer ends the outage, whatever it says', () => {
    const was = run({ unreachableSince: NOW - 5000 });
    expect(settle(was, result({ t: 'continue' }, true), { now: NOW, random: HALF }).patch.unreachableSince).toBeNull();
    expect(
      settle(was, result({ t: 'failed', error: boom, retryable: true, step }), { now: NOW, random: HALF }).patch,
    ).toMatchObject({ unreachableSince: null, failures: 1 });
    expect(
      settle(was, result({ t: 'error', error: boom, retryable: true }), { now: NOW, random: HALF }).patch
        .unreachableSince,
    ).toBeNull();
    // Not reachable before: nothing to clear, nothing written.
    expect(settle(run(), result({ t: 'continue' }), { now: NOW, random: HALF }).patch).not.toHaveProperty(
      'unreachableSince',
    );
  });
});

describe('settle: step logs of a failed attempt', () => {
  const logs = { lines: [{ at: NOW - 3, level: 'error' as const, message: 'about to fail' }], dropped: 2 };
  it.each([
    ['retrying', 0],
    ['failed', 3],
  ] as const)(
    'a step failure (%s) commits what the step printed, under the attempt it failed in',
    (status, failures) => {
      const { changes } = settle(
        run({ failures }),
        result({ t: 'failed', error: boom, retryable: true, step: { ...step, logs } }),
        { now: NOW, random: HALF },
      );
      expect(changes).toEqual([
        stepFailed(status),
        {
          type: 'step-logs',
          runId: run().id,
          index: 2,
          name: 'charge',
          attempt: 5,
          status: 'failed',
          at: NOW,
          lines: logs.lines,
          dropped: 2,
        },
      ]);
    },
  );

  it('a quiet step adds no change', () => {
    expect(
      settle(run(), result({ t: 'failed', error: boom, retryable: true, step }), { now: NOW, random: HALF }).changes,
    ).toEqual([stepFailed('retrying')]);
  });
});
