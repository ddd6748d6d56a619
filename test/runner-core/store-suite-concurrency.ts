import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../runner-core/store/types.js';
import { T0, claimRun, newRun, runId } from './store-fixtures.js';

const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Two handles on one store, each with its own connection, stand for two runner processes.
 * Skipped for a store only one handle can open (`:memory:`).
 */
export function describeConcurrency(
  open: () => Promise<Store> | Store,
  peer: (() => Promise<Store> | Store) | undefined,
): void {
  describe.skipIf(!peer)('two handles on one store (two runners)', () => {
    let a: Store;
    let b: Store;
    beforeEach(async () => {
      a = await open();
      b = await peer!();
    });
    afterEach(async () => {
      await Promise.all([a.close(), b.close()]);
    });

    it('never hands the same run to two claimers, and every claimed run stays leased to its claimer', async () => {
      const ids = Array.from({ length: 200 }, (_, i) => runId(i + 1));
      for (let n = 1; n <= 200; n++) await a.createRun(newRun(n));
      const now = T0 + 1e6;
      const leaseMs = 60_000;
      const claimed: string[] = [];
      const claimAll = async (store: Store, owner: string): Promise<void> => {
        for (;;) {
          const runs = await store.claimDue({ now, limit: 7, owner, leaseMs });
          if (runs.length === 0) return;
          claimed.push(...runs.map((r) => r.id));
          // Give the other claimer a chance between batches (whether it takes it is the scheduler's
          // business: on a busy machine one claimer may take them all, which is as correct).
          await yieldTurn();
        }
      };
      await Promise.all([claimAll(a, 'a'), claimAll(b, 'b')]);
      // What the store guarantees: no run twice, every due run once.
      expect(new Set(claimed).size).toBe(claimed.length);
      expect([...claimed].sort()).toEqual(ids);
      // Leases respected: nobody else gets a run while its lease lasts, everybody once it ran out.
      expect(await b.claimDue({ now: now + leaseMs - 1, limit: 500, owner: 'c', leaseMs })).toEqual([]);
      expect(
        (await a.claimDue({ now: now + leaseMs + 1, limit: 500, owner: 'c', leaseMs })).map((r) => r.id).sort(),
      ).toEqual(ids);
    });

    it('gives a run to exactly one of two racing claims', async () => {
      for (let n = 1; n <= 20; n++) {
        await a.createRun(newRun(n));
        const [first, second] = await Promise.all([
          claimRun(a, runId(n), { owner: 'a', leaseMs: 60_000, now: T0 + 100 }),
          claimRun(b, runId(n), { owner: 'b', leaseMs: 60_000, now: T0 + 100 }),
        ]);
        expect(
          [first, second].filter((run) => run !== undefined),
          `run ${n}`,
        ).toHaveLength(1);
      }
    });

    it('never loses an event between a notify and a wait registered at the same moment', async () => {
      for (let n = 1; n <= 30; n++) {
        const id = runId(n);
        const eventId = `race-${n}`;
        await a.createRun(newRun(n));
        // The runner's order: commit the wait, then look for a kept event (suspensions.ts).
        const wait = async (): Promise<string | undefined> => {
          await a.apply([
            {
              type: 'step-suspended',
              runId: id,
              index: 0,
              name: 'w',
              kind: 'wait',
              group: null,
              until: T0 + 60_000,
              eventId,
              request: null,
              at: T0,
            },
          ]);
          return a.takeEvent(eventId, T0 + 10);
        };
        const notify = (): Promise<string[]> =>
          b.deliverEvent({ eventId, data: `"${n}"`, output: `"out-${n}"`, now: T0 + 10, keepUntil: T0 + 60_000 });
        let taken: string | undefined;
        let woke: string[];
        if (n % 2 === 0) [taken, woke] = await Promise.all([wait(), notify()]);
        else [woke, taken] = await Promise.all([notify(), wait()]);
        const step = (await a.listSteps(id))[0];
        const resolved = step?.status === 'succeeded';
        // Exactly one of them delivered it: the notify resolved the wait, or the wait took the kept event.
        expect(resolved || taken !== undefined, `event ${eventId} was lost`).toBe(true);
        expect(resolved && taken !== undefined, `event ${eventId} was delivered twice`).toBe(false);
        if (resolved) expect(woke).toEqual([id]);
        else expect(taken).toBe(`"${n}"`);
        expect(await a.takeEvent(eventId, T0 + 20)).toBeUndefined();
      }
    });
  });
}
