import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Change, RunPatch, Store } from '../../runner-core/store/types.js';
import { T0, claimRun, newRun, runId, started } from './store-fixtures.js';

const lease = { owner: 'a', leaseMs: 1000 };
const patch = (n: number, p: RunPatch, at = T0 + 50): Change => ({ type: 'run', runId: runId(n), patch: p, at });

/**
 * An app outage (`unreachableSince`), a failed run's failureFunction call (claimable while pending,
 * its status never changing) and `reportedExecutions`: the same on every store.
 */
export function describeResilience(open: () => Promise<Store> | Store): void {
  describe('outages and failureFunction calls', () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    it('stores and clears unreachableSince, leaving failures alone', async () => {
      await store.createRun(newRun(1));
      await store.apply([patch(1, { unreachableSince: T0 + 10, nextAt: T0 + 2000 })]);
      expect(await store.getRun(runId(1))).toMatchObject({
        unreachableSince: T0 + 10,
        nextAt: T0 + 2000,
        failures: 0,
        status: 'queued',
      });
      await store.apply([patch(1, { unreachableSince: null })]);
      expect((await store.getRun(runId(1)))!.unreachableSince).toBeNull();
    });

    it('a failed run with its failureFunction call pending stays claimable until delivered; its status never changes', async () => {
      await store.createRun(newRun(1));
      await store.createRun(newRun(2));
      const failed: RunPatch = { status: 'failed', finishedAt: T0 + 50, error: { name: 'Error', message: 'boom' } };
      await store.apply([
        patch(1, { ...failed, failureCall: 'pending', failureCallAttempts: 0, nextAt: T0 + 100 }),
        patch(2, { ...failed, nextAt: null }),
      ]);
      expect(await store.nextDueAt()).toBe(T0 + 100);
      expect((await store.stats(T0 + 100)).due).toBe(1);
      const claimed = await store.claimDue({ ...lease, now: T0 + 100, limit: 10 });
      expect(claimed.map((r) => [r.id, r.status, r.failureCall])).toEqual([[runId(1), 'failed', 'pending']]);

      // A throwing failureFunction: retried later; a try at making it running again is ignored.
      await store.apply(
        [
          patch(1, { status: 'running', failureCallAttempts: 1, failures: 1, nextAt: T0 + 5000 }),
          { type: 'release', runId: runId(1), owner: 'a' },
        ],
        { owner: 'a' },
      );
      expect(await store.getRun(runId(1))).toMatchObject({
        status: 'failed',
        failureCall: 'pending',
        failureCallAttempts: 1,
        failures: 1,
      });
      expect(await store.claimDue({ ...lease, now: T0 + 4999, limit: 10 })).toEqual([]);
      expect(await claimRun(store, runId(1), { ...lease, now: T0 + 5000 })).toMatchObject({
        id: runId(1),
        status: 'failed',
      });

      await store.apply([patch(1, { failureCall: 'delivered', failureCallAttempts: 2, nextAt: null })], { owner: 'a' });
      expect(await store.getRun(runId(1))).toMatchObject({
        status: 'failed',
        failureCall: 'delivered',
        failureCallAttempts: 2,
        nextAt: null,
      });
      expect(await store.claimDue({ ...lease, now: T0 + 1e9, limit: 10 })).toEqual([]);
      expect(await claimRun(store, runId(1), { ...lease, owner: 'b', now: T0 + 1e9 })).toBeUndefined();
      expect(await store.nextDueAt()).toBeNull();
    });

    it('a finished run without a pending call is never claimed, even with a stale nextAt', async () => {
      await store.createRun(newRun(1));
      await store.apply([
        patch(1, { status: 'cancelled', finishedAt: T0 + 50, nextAt: null }),
        patch(1, { nextAt: T0 + 60 }),
      ]);
      await store.apply([patch(1, { failureCall: 'failed' })]);
      expect(await store.claimDue({ ...lease, now: T0 + 1e9, limit: 10 })).toEqual([]);
      expect(await store.nextDueAt()).toBeNull();
    });

    it('reportedExecutions counts the started lines committed for a position', async () => {
      await store.createRun(newRun(1));
      await store.apply([started(runId(1), 0, T0 + 10)]);
      await store.apply([started(runId(1), 0, T0 + 20), started(runId(1), 0, T0 + 30)]);
      expect((await store.listSteps(runId(1))).map((s) => s.reportedExecutions)).toEqual([3]);
    });

    it('executions-reported adds to an existing step only, unfenced, changing nothing else', async () => {
      await store.createRun(newRun(1));
      await store.apply([started(runId(1), 0, T0 + 10)]);
      await store.claimDue({ ...lease, owner: 'new-holder', now: T0 + 100, limit: 10 });
      const before = (await store.listSteps(runId(1)))[0]!;
      await store.apply([
        { type: 'executions-reported', runId: runId(1), index: 0, count: 2 },
        { type: 'executions-reported', runId: runId(1), index: 1, count: 1 },
      ]);
      const steps = await store.listSteps(runId(1));
      expect(steps).toEqual([{ ...before, reportedExecutions: 3 }]);
    });
  });
}
