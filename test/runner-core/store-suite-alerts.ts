import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../runner-core/store/types.js';
import { T0, attempt, claimRun, newRun, runId } from './store-fixtures.js';

/**
 * Failure alerts in the store: a failed run whose alert is pending stays claimable (whatever its
 * failureFunction call), its delivery fields round-trip, fenced like any drive commit, and resume
 * clears them (a new failure owes a new alert).
 */
export function describeAlerts(open: () => Promise<Store> | Store): void {
  describe('failure alerts', () => {
    let store: Store;
    const id = runId(1);
    beforeEach(async () => {
      store = await open();
      await store.createRun(newRun(1));
    });
    afterEach(async () => {
      await store.close();
    });

    async function fail(alert: 'pending' | null): Promise<void> {
      await store.apply([
        {
          type: 'run',
          runId: id,
          at: T0 + 10,
          patch: {
            status: 'failed',
            finishedAt: T0 + 10,
            nextAt: alert ? T0 + 10 : null,
            error: { name: 'Error', message: 'boom' },
            ...(alert && { alert, alertAttempts: 0 }),
          },
        },
      ]);
    }

    it('a run that owes no alert shows none; a failed run with one pending is claimable until it is delivered', async () => {
      expect(await store.getRun(id)).toMatchObject({ alert: null, alertAttempts: 0 });
      await fail('pending');
      expect(await store.getRun(id)).toMatchObject({ status: 'failed', alert: 'pending', alertAttempts: 0 });
      expect(await store.nextDueAt()).toBe(T0 + 10);
      const claimed = await claimRun(store, id, { owner: 'r1', leaseMs: 1000, now: T0 + 20 });
      expect(claimed).toMatchObject({ id, alert: 'pending' });
      await store.apply(
        [
          { type: 'attempt', attempt: attempt(id, 1, { outcome: 'alert delivered' }) },
          {
            type: 'run',
            runId: id,
            at: T0 + 30,
            patch: { attempts: 1, alert: 'delivered', alertAttempts: 1, nextAt: null },
          },
          { type: 'release', runId: id, owner: 'r1' },
        ],
        { owner: 'r1' },
      );
      expect(await store.getRun(id)).toMatchObject({
        status: 'failed',
        alert: 'delivered',
        alertAttempts: 1,
        nextAt: null,
      });
      expect(await claimRun(store, id, { owner: 'r2', leaseMs: 1000, now: T0 + 40 })).toBeUndefined();
      expect(await store.nextDueAt()).toBeNull();
    });

    it('a failed run without an alert (and no failureFunction call) is not claimable', async () => {
      await fail(null);
      expect(await claimRun(store, id, { owner: 'r1', leaseMs: 1000, now: T0 + 20 })).toBeUndefined();
    });

    it("the failureFunction call and the alert keep their own schedules beside the run's claim time", async () => {
      await store.apply([
        {
          type: 'run',
          runId: id,
          at: T0 + 10,
          patch: {
            status: 'failed',
            finishedAt: T0 + 10,
            nextAt: T0 + 10,
            failureCall: 'pending',
            failureCallAttempts: 0,
            failureCallNextAt: T0 + 10,
            alert: 'pending',
            alertAttempts: 0,
            alertNextAt: T0 + 10,
          },
        },
      ]);
      expect(await store.getRun(id)).toMatchObject({ failureCallNextAt: T0 + 10, alertNextAt: T0 + 10 });
      // The call delivered, the alert on its own retry: the run is due when the alert is.
      await store.apply([
        {
          type: 'run',
          runId: id,
          at: T0 + 20,
          patch: {
            failureCall: 'delivered',
            failureCallNextAt: null,
            alertAttempts: 1,
            alertNextAt: T0 + 500,
            nextAt: T0 + 500,
          },
        },
      ]);
      const run = await store.getRun(id);
      expect(run).toMatchObject({
        failureCall: 'delivered',
        alert: 'pending',
        alertNextAt: T0 + 500,
        nextAt: T0 + 500,
      });
      expect(run).not.toHaveProperty('failureCallNextAt');
      expect(await store.nextDueAt()).toBe(T0 + 500);
    });

    it('resume clears the alert: a new failure owes a new one', async () => {
      await fail('pending');
      const resumed = await store.resumeRun(id, T0 + 100);
      expect(resumed?.run).toMatchObject({ status: 'queued' });
      expect(resumed?.run).toMatchObject({ alert: null, alertAttempts: 0 });
    });
  });
}
