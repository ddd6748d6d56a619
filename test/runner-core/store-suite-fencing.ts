import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../runner-core/store/errors.js';
import type { Change, Store } from '../../runner-core/store/types.js';
import { T0, claimRun, attempt, newRun, runId, started, succeeded } from './store-fixtures.js';

const lease = (owner: string, now = T0 + 10) => ({ owner, leaseMs: 1000, now });

async function rejection(promise: Promise<unknown>): Promise<LeaseLostError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!LeaseLostError.is(error))
    throw new Error(`Expected a LeaseLostError, got ${error instanceof Error ? error.stack : String(error)}`);
  return error;
}

/**
 * Fencing: an `apply` with `owner` commits only while that owner holds the lease of every run it
 * touches, so a runner that stalled past its lease cannot commit a step result over the new holder's.
 */
export function describeFencing(open: () => Promise<Store> | Store): void {
  describe('fencing (apply with an owner)', () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
      await store.createRun(newRun(1));
      await store.createRun(newRun(2));
    });
    afterEach(async () => {
      await store.close();
    });

    it('applies the changes of runs whose lease the owner holds', async () => {
      await claimRun(store, runId(1), lease('a'));
      await claimRun(store, runId(2), lease('a'));
      await store.apply(
        [
          started(runId(1), 0, T0 + 20),
          succeeded(runId(1), 0, '"x"', T0 + 25),
          succeeded(runId(2), 0, '"y"', T0 + 25),
          { type: 'attempt', attempt: attempt(runId(1), 1) },
          { type: 'run', runId: runId(1), patch: { status: 'running', attempts: 1 }, at: T0 + 30 },
          { type: 'release', runId: runId(1), owner: 'a' },
        ],
        { owner: 'a' },
      );
      expect((await store.listSteps(runId(1))).map((s) => [s.status, s.output])).toEqual([['succeeded', '"x"']]);
      expect(await store.getRun(runId(1))).toMatchObject({ status: 'running', attempts: 1, stepsDone: 1 });
      // The release went through: someone else may claim run 1 now, not run 2.
      expect((await claimRun(store, runId(1), lease('b', T0 + 40)))?.id).toBe(runId(1));
      expect(await claimRun(store, runId(2), lease('b', T0 + 40))).toBeUndefined();
    });

    it('rejects a batch touching a run leased to another owner, naming the run, and applies none of it', async () => {
      await claimRun(store, runId(1), lease('a'));
      await claimRun(store, runId(2), lease('b'));
      const error = await rejection(
        store.apply(
          [
            started(runId(1), 0, T0 + 20),
            succeeded(runId(2), 0, '"stale"', T0 + 25),
            { type: 'run', runId: runId(2), patch: { status: 'completed' }, at: T0 + 30 },
          ],
          { owner: 'a' },
        ),
      );
      expect(error).toMatchObject({
        name: 'LeaseLostError',
        code: 'LEASE_LOST',
        runId: runId(2),
        owner: 'a',
        holder: 'b',
      });
      expect(error.message).toContain(runId(2));
      expect(await store.listSteps(runId(1))).toEqual([]);
      expect(await store.listSteps(runId(2))).toEqual([]);
      expect((await store.getRun(runId(2)))?.status).toBe('queued');
      // The store is still usable after the rollback.
      await store.apply([started(runId(1), 0, T0 + 40)], { owner: 'a' });
      expect(await store.listSteps(runId(1))).toHaveLength(1);
    });

    it('fences every kind of change, and runs nobody holds (never claimed, or released)', async () => {
      const byKind: Change[] = [
        started(runId(1), 0, T0 + 20),
        succeeded(runId(1), 0, '"x"', T0 + 20),
        {
          type: 'step-failed',
          runId: runId(1),
          index: 0,
          name: 's0',
          kind: 'run',
          status: 'failed',
          at: T0 + 20,
          durationMs: 1,
          error: { name: 'Error', message: 'x' },
        },
        {
          type: 'step-suspended',
          runId: runId(1),
          index: 0,
          name: 'nap',
          kind: 'sleep',
          group: null,
          until: T0 + 99,
          eventId: null,
          request: null,
          at: T0 + 20,
        },
        { type: 'steps-closed', runId: runId(1), status: 'cancelled', at: T0 + 20 },
        { type: 'attempt', attempt: attempt(runId(1), 1) },
        { type: 'run', runId: runId(1), patch: { status: 'completed' }, at: T0 + 20 },
        { type: 'release', runId: runId(1), owner: 'a' },
      ];
      for (const change of byKind) {
        expect(await rejection(store.apply([change], { owner: 'a' })), change.type).toMatchObject({
          runId: runId(1),
          holder: null,
        });
      }
      await claimRun(store, runId(1), lease('a'));
      await store.release(runId(1), 'a');
      await rejection(store.apply([started(runId(1), 0, T0 + 20)], { owner: 'a' }));
      expect(await store.listSteps(runId(1))).toEqual([]);
      expect(await store.listAttempts(runId(1))).toEqual([]);
      expect((await store.getRun(runId(1)))?.status).toBe('queued');
    });

    it('after a takeover, only the new holder commits: the step keeps exactly one result', async () => {
      await claimRun(store, runId(1), lease('a'));
      await store.apply([started(runId(1), 0, T0 + 20)], { owner: 'a' });
      // a stalls past its lease; b's scheduler takes the run over and drives the step again.
      const taken = await store.claimDue({ owner: 'b', leaseMs: 1000, now: T0 + 5000, limit: 10 });
      expect(taken.map((r) => r.id)).toContain(runId(1));
      await store.apply([started(runId(1), 0, T0 + 5010), succeeded(runId(1), 0, '"fresh"', T0 + 5020)], {
        owner: 'b',
      });
      // a wakes up and reports its (older) execution's result, then tries to renew and release.
      expect(
        await rejection(store.apply([succeeded(runId(1), 0, '"stale"', T0 + 5030)], { owner: 'a' })),
      ).toMatchObject({ holder: 'b' });
      await store.renew([runId(1)], 'a', T0 + 60_000);
      await store.release(runId(1), 'a');
      const steps = await store.listSteps(runId(1));
      expect(steps.map((s) => [s.index, s.status, s.output, s.reportedExecutions])).toEqual([
        [0, 'succeeded', '"fresh"', 2],
      ]);
      expect((await store.getRun(runId(1)))?.stepsDone).toBe(1);
      expect(await claimRun(store, runId(1), lease('c', T0 + 5100))).toBeUndefined();
    });

    it('still lets the holder of a lease that ran out commit while nobody took the run', async () => {
      await claimRun(store, runId(1), lease('a'));
      // Nobody claimed it meanwhile, so whoever claims next reads what a commits now.
      await store.apply([succeeded(runId(1), 0, '"late"', T0 + 50_000)], { owner: 'a' });
      expect((await store.listSteps(runId(1)))[0]?.output).toBe('"late"');
    });

    it('does not fence changes without an owner (API actions: cancel)', async () => {
      await claimRun(store, runId(1), lease('b'));
      await store.apply([
        { type: 'steps-closed', runId: runId(1), status: 'cancelled', at: T0 + 20 },
        {
          type: 'run',
          runId: runId(1),
          patch: { status: 'cancelled', finishedAt: T0 + 20, nextAt: null },
          at: T0 + 20,
        },
      ]);
      expect((await store.getRun(runId(1)))?.status).toBe('cancelled');
    });
  });
}
