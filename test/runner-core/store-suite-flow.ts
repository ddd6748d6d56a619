import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FLOW_RECHECK_MS } from '../../runner-core/store/flow-admission.js';
import type { Store } from '../../runner-core/store/types.js';
import { T0, newRun, runId } from './store-fixtures.js';

/** Flow control in `claimDue`: the rules every store must apply identically. */
export function describeFlow(open: () => Promise<Store> | Store): void {
  describe('flow control', () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    const claim = async (now: number, owner = 'r1') =>
      (await store.claimDue({ now, limit: 10, owner, leaseMs: 30_000 })).map((run) => run.id);

    it('reads a run back with the key and limits it was created with (a rerun starts under them); none without', async () => {
      const flowControl = { key: 'tenant-42', parallelism: 2, rate: 5, periodMs: 2000 };
      expect((await store.createRun(newRun(1, { flowControl }))).run.flowControl).toEqual(flowControl);
      expect((await store.getRun(runId(1)))!.flowControl).toEqual(flowControl);
      await store.createRun(newRun(2, { flowControl: { key: 'api', rate: 3 } }));
      expect((await store.getRun(runId(2)))!.flowControl).toEqual({ key: 'api', rate: 3 });
      await store.createRun(newRun(3));
      expect(await store.getRun(runId(3))).not.toHaveProperty('flowControl');
    });

    it('leases at most `parallelism` runs of a key, oldest first, and the next once one is released', async () => {
      for (let n = 1; n <= 5; n++)
        await store.createRun(newRun(n, { flowControl: { key: 'tenant-42', parallelism: 2 } }));
      expect(await claim(T0 + 10)).toEqual([runId(1), runId(2)]);
      // Another runner finds the key full: nothing of it, not even later runs.
      expect(await claim(T0 + 10 + FLOW_RECHECK_MS, 'r2')).toEqual([]);
      // Every waiting run says why, in the words the dashboards and `wf logs` show.
      expect(await store.getRun(runId(5))).toMatchObject({
        flowKey: 'tenant-42',
        queuedReason: 'flow control `tenant-42`: 2 of 2 running',
      });
      expect((await store.getRun(runId(1)))?.queuedReason).toBeUndefined();
      // A released lease (a run sleeping, waiting or done) holds no slot.
      await store.release(runId(1), 'r1');
      expect(await claim(T0 + 20 + 2 * FLOW_RECHECK_MS, 'r2')).toEqual([runId(1)]);
      await store.apply([
        {
          type: 'run',
          runId: runId(1),
          patch: { status: 'completed', finishedAt: T0 + 30, nextAt: null },
          at: T0 + 30,
        },
      ]);
      await store.release(runId(1), 'r2');
      expect(await claim(T0 + 40 + 3 * FLOW_RECHECK_MS, 'r2')).toEqual([runId(3)]);
    });

    it('starts at most `rate` runs of a key per period, the rest once the period has passed', async () => {
      for (let n = 1; n <= 5; n++)
        await store.createRun(newRun(n, { flowControl: { key: 'api', rate: 3, periodMs: 1000 } }));
      expect(await claim(T0 + 10)).toEqual([runId(1), runId(2), runId(3)]);
      for (let n = 1; n <= 3; n++) await store.release(runId(n), 'r1');
      // Released runs are due again, but they were started already: only new starts count.
      expect(await claim(T0 + 500)).toEqual([runId(1), runId(2), runId(3)]);
      for (let n = 1; n <= 3; n++) await store.release(runId(n), 'r1');
      expect((await claim(T0 + 900)).filter((id) => id === runId(4) || id === runId(5))).toEqual([]);
      expect((await store.getRun(runId(4)))?.queuedReason).toBe('flow control `api`: 3 of 3 started in the last 1s');
      for (let n = 1; n <= 3; n++) await store.release(runId(n), 'r1');
      expect(await store.nextDueAt()).toBeLessThanOrEqual(T0 + 1011);
      expect((await claim(T0 + 1011)).filter((id) => id === runId(4) || id === runId(5))).toEqual([runId(4), runId(5)]);
    });

    it('never holds back runs without a key or of another key', async () => {
      await store.createRun(newRun(1, { flowControl: { key: 'a', parallelism: 1 } }));
      await store.createRun(newRun(2, { flowControl: { key: 'a', parallelism: 1 } }));
      await store.createRun(newRun(3));
      await store.createRun(newRun(4, { flowControl: { key: 'b', parallelism: 1 } }));
      expect((await claim(T0 + 10)).sort()).toEqual([runId(1), runId(3), runId(4)]);
    });
  });
}
