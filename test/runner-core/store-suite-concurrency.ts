import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../runner-core/store/types.js';
import { T0, claimRun, newRun, runId } from './store-fixtures.js';

const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Two handles on one store, each with its own connection, stand for two runner processes.
 * Skipped for a store only one handle can open (`:memory:`).
 */
export function describeConcurrency(open: () => Promise<Store> | Store, peer: (() => Promise<Store> | Store) | undefined): void {
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

    it('never hands the same run to two claimers', async () => {
      for (let n = 1; n <= 200; n++) await a.createRun(newRun(n));
      const claimed = new Map<string, string[]>([['a', []], ['b', []]]);
      const claimAll = async (store: Store, owner: string): Promise<void> => {
        for (;;) {
          const runs = await store.claimDue({ now: T0 + 1e6, limit: 7, owner, leaseMs: 60_000 });
          if (runs.length === 0) return;
          claimed.get(owner)?.push(...runs.map((r) => r.id));
          // Yield so the other claimer's batch runs between ours.
          await yieldTurn();
        }
      };
      await Promise.all([claimAll(a, 'a'), claimAll(b, 'b')]);
      const all = [...(claimed.get('a') ?? []), ...(claimed.get('b') ?? [])];
      expect(new Set(all).size).toBe(all.length);
      expect(all.length).toBe(200);
      // Both claimers took part, so the batches really interleaved.
      expect(claimed.get('a')?.length).toBeGreaterThan(0);
      expect(claimed.get('b')?.length).toBeGreaterThan(0);
    });

    it('gives a run to exactly one of two racing claims', async () => {
      for (let n = 1; n <= 20; n++) {
        await a.createRun(newRun(n));
        const [first, second] = await Promise.all([
          claimRun(a, runId(n), { owner: 'a', leaseMs: 60_000, now: T0 + 100 }),
          claimRun(b, runId(n), { owner: 'b', leaseMs: 60_000, now: T0 + 100 }),
        ]);
        expect([first, second].filter((run) => run !== undefined), `run ${n}`).toHaveLength(1);
      }
    });

    it('never loses an event between a notify and a wait registered at the same moment', async () => {
      for (let n = 1; n <= 30; n++) {
        const id = runId(n);
        const eventId = `race-${n}`;
        await a.createRun(newRun(n));
        // The runner's order: commit the wait, then look for a kept event (suspensions.ts).
        const wait = async (): Promise<string | undefined> => {
          await a.apply([{ type: 'step-suspended', runId: id, index: 0, name: 'w', kind: 'wait', group: null, until: T0 + 60_000, eventId, request: null, at: T0 }]);
          return a.takeEvent(eventId, T0 + 10);
        };
        const notify = (): Promise<string[]> => b.deliverEvent({ eventId, data: `"${n}"`, output: `"out-${n}"`, now: T0 + 10, keepUntil: T0 + 60_000 });
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
