import { describe, expect, it } from 'vitest';
import { AttemptNumbers } from '../../runner-core/run-end/attempt-numbers.js';
import { cancellation, completion, failure } from '../../runner-core/run-end/end.js';
import { deliveriesDueAt } from '../../runner-core/run-end/owed.js';

/** run-end/: how every run's end is built, and when a finished run is due for what it owes. */

const NOW = 1_700_000_000_000;
const error = { name: 'Error', message: 'boom' };
const native = { id: 'wfr_1' };
const upstash = { id: 'wfr_u', protocol: 'upstash' as const };

describe('run-end: the ends', () => {
  it('completion and cancellation clear the schedule; a cancel closes the open steps', () => {
    expect(completion('"ok"', NOW)).toEqual({
      changes: [],
      patch: {
        status: 'completed',
        output: '"ok"',
        finishedAt: NOW,
        nextAt: null,
        failures: 0,
        unreachableSince: null,
      },
    });
    expect(cancellation('wfr_1', NOW)).toEqual({
      changes: [{ type: 'steps-closed', runId: 'wfr_1', status: 'cancelled', at: NOW }],
      patch: { status: 'cancelled', finishedAt: NOW, nextAt: null },
    });
  });

  it('a native failure owes its failureFunction call and its alert, each due now on its own schedule', () => {
    const { changes, patch } = failure(native, { error, at: NOW, failureCall: 'native', alerts: true });
    expect(changes).toEqual([{ type: 'steps-closed', runId: 'wfr_1', status: 'failed', at: NOW }]);
    expect(patch).toEqual({
      status: 'failed',
      error,
      finishedAt: NOW,
      nextAt: NOW,
      failureCall: 'pending',
      failureCallAttempts: 0,
      failureCallNextAt: NOW,
      failures: 0,
      unreachableSince: null,
      alert: 'pending',
      alertAttempts: 0,
      alertNextAt: NOW,
    });
  });

  it('a failure that owes nothing is not claimable again', () => {
    expect(failure(native, { error, at: NOW, failureCall: false, alerts: false }).patch).toEqual({
      status: 'failed',
      error,
      finishedAt: NOW,
      nextAt: null,
    });
  });

  it("an Upstash failure: its failure callback is the engine's message (marked pending, never scheduled here); only its alert makes it due", () => {
    expect(failure(upstash, { error, at: NOW, failureCall: 'message', alerts: false }).patch).toEqual({
      status: 'failed',
      error,
      finishedAt: NOW,
      nextAt: null,
      failureCall: 'pending',
    });
    expect(failure(upstash, { error, at: NOW, failureCall: 'message', alerts: true }).patch).toMatchObject({
      failureCall: 'pending',
      alert: 'pending',
      alertNextAt: NOW,
      nextAt: NOW,
    });
  });
});

describe('run-end: when a finished run is due', () => {
  const failed = { failureCall: null, alert: null, nextAt: null } as const;

  it('the earlier of the owed deliveries, each by its own schedule', () => {
    expect(
      deliveriesDueAt({
        ...failed,
        failureCall: 'pending',
        failureCallNextAt: NOW + 5000,
        alert: 'pending',
        alertNextAt: NOW + 100,
      }),
    ).toBe(NOW + 100);
    expect(
      deliveriesDueAt({
        ...failed,
        failureCall: 'pending',
        failureCallNextAt: NOW + 5000,
        alert: 'delivered',
        alertNextAt: null,
      }),
    ).toBe(NOW + 5000);
    expect(deliveriesDueAt({ ...failed, failureCall: 'delivered', alert: 'failed' })).toBeNull();
  });

  it("an Upstash run's failure callback never makes it due (the engine delivers it); a run stored before the schedules uses its nextAt", () => {
    expect(
      deliveriesDueAt({ ...failed, protocol: 'upstash', failureCall: 'pending', failureCallNextAt: NOW }),
    ).toBeNull();
    expect(deliveriesDueAt({ ...failed, failureCall: 'pending', nextAt: NOW + 7 })).toBe(NOW + 7);
  });
});

describe('run-end: attempt numbers of deliveries side by side', () => {
  it('each try takes the next number, and every commit writes the highest taken, whichever commits first', async () => {
    const numbers = new AttemptNumbers({ attempts: 4 }, () => NOW);
    expect(await numbers.take('wfr_1')).toBe(5);
    expect(await numbers.take('wfr_1')).toBe(6);
    // The try numbered 5 commits after the one numbered 6: the counter stays at 6.
    expect(numbers.counted({ attempts: 5, alert: 'delivered' })).toEqual({ attempts: 6, alert: 'delivered' });
  });

  it("an Upstash run's numbers come from its engine's counter, which already counts them", async () => {
    const numbers = new AttemptNumbers(
      { attempts: 4, protocol: 'upstash' },
      () => NOW,
      async () => 12,
    );
    expect(await numbers.take('wfr_u')).toBe(12);
    expect(numbers.counted({ attempts: 5, alert: 'failed' })).toEqual({ alert: 'failed' });
  });
});
