import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Change, Store } from '../../runner-core/store/types.js';
import { T0, claimRun, failed, newRun, runId, started, succeeded } from './store-fixtures.js';

/**
 * `resumeRun`: a failed or cancelled run starts again at the step that failed; succeeded steps are
 * kept exactly as they were (the route replays them), every other step is cleared.
 */
export function describeResume(open: () => Promise<Store> | Store): void {
  describe('resumeRun', () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
      await store.createRun(newRun(1));
    });
    afterEach(async () => {
      await store.close();
    });

    /** Steps 0 and 1 succeeded, 2 failed, 3 still running (a parallel one), then the run failed with a failureFunction call owed. */
    async function failRun(status: 'failed' | 'cancelled'): Promise<void> {
      const id = runId(1);
      await store.apply([
        started(id, 0, T0 + 10),
        succeeded(id, 0, '"a"', T0 + 11),
        started(id, 1, T0 + 12),
        succeeded(id, 1, '"b"', T0 + 13),
        started(id, 2, T0 + 14),
        failed(id, 2, 'failed', T0 + 15),
        started(id, 3, T0 + 14),
        { type: 'steps-closed', runId: id, status: status === 'failed' ? 'failed' : 'cancelled', at: T0 + 16 },
        {
          type: 'run',
          runId: id,
          at: T0 + 16,
          patch: {
            status,
            finishedAt: T0 + 16,
            nextAt: null,
            failures: 2,
            error: { name: 'Error', message: 'boom' },
            failureCall: status === 'failed' ? 'pending' : null,
          },
        },
      ] as Change[]);
    }

    it('makes a failed run queued and due, keeps succeeded steps and clears the rest', async () => {
      await failRun('failed');
      const kept = (await store.listSteps(runId(1))).slice(0, 2);
      const result = await store.resumeRun(runId(1), T0 + 100);
      expect(result?.resumed).toBe(true);
      expect(result?.run).toMatchObject({
        status: 'queued',
        nextAt: T0 + 100,
        finishedAt: null,
        error: null,
        output: null,
        failures: 0,
        failureCall: null,
        failureCallAttempts: 0,
        stepsDone: 2,
      });
      expect(await store.getRun(runId(1))).toEqual(result?.run);
      expect(await store.listSteps(runId(1))).toEqual(kept);
      // Due again: a runner claims it.
      expect((await claimRun(store, runId(1), { owner: 'r1', leaseMs: 1000, now: T0 + 100 }))?.id).toBe(runId(1));
    });

    it('resumes a cancelled run the same way', async () => {
      await failRun('cancelled');
      const result = await store.resumeRun(runId(1), T0 + 100);
      expect(result).toMatchObject({ resumed: true, run: { status: 'queued' } });
      expect((await store.listSteps(runId(1))).map((s) => [s.index, s.status])).toEqual([
        [0, 'succeeded'],
        [1, 'succeeded'],
      ]);
    });

    it('changes nothing for a run in another status, and answers undefined for an unknown run', async () => {
      const before = await store.getRun(runId(1));
      expect(await store.resumeRun(runId(1), T0 + 100)).toEqual({ run: before, resumed: false });
      expect(await store.getRun(runId(1))).toEqual(before);
      expect(await store.resumeRun(runId(9), T0 + 100)).toBeUndefined();
    });
  });
}
