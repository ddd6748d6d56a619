import { describe, expect, it } from 'vitest';
import { openQstashStores } from '../../runner-core/qstash/stores.js';
import type { QstashWaitStore, Wait } from '../../runner-core/qstash/waits/waits.js';
import type { Store } from '../../runner-core/store/types.js';
import { newRun, runId as storeRunId, T0 } from './store-fixtures.js';

/** A wait of `runId` on `eventId` at step `stepId`, registered at `at`, timing out `timeoutMs` later. */
export function newWait(
  runId: string,
  eventId: string,
  options: { stepId?: number; at?: number; timeoutMs?: number } = {},
): Wait {
  const at = options.at ?? T0;
  return {
    runId,
    eventId,
    url: 'http://127.0.0.1:3000/api/workflow',
    step: { stepId: options.stepId ?? 2, stepName: 'wait for it', stepType: 'Wait', concurrent: 1 },
    timeout: '60s',
    createdAt: at,
    deadline: at + (options.timeoutMs ?? 60_000),
    headers: { 'upstash-workflow-runid': [runId] },
    timeoutHeaders: { 'Upstash-Workflow-Runid': [runId] },
  };
}

/** The QStash wait store beside `store`, on its database (as the runner builds it). */
function waitsOf(store: Store): QstashWaitStore {
  return openQstashStores(store.connection)!.waits;
}

/**
 * `QstashWaitStore` against a fresh store from `open` (SQLite or PostgreSQL). `peer` opens a second
 * handle on the same database, standing for a second runner.
 */
export function describeWaitStore(
  name: string,
  open: () => Promise<Store>,
  options: { peer?: () => Promise<Store> } = {},
): void {
  describe(`qstash waits: ${name}`, () => {
    it('stores a wait, lists it by event, and a notify takes it exactly once', async () => {
      const waits = waitsOf(await open());
      expect(await waits.register(newWait('wfr_a', 'order-1'), T0)).toEqual({ kind: 'waiting' });
      expect(await waits.register(newWait('wfr_b', 'order-1', { at: T0 + 1 }), T0 + 1)).toEqual({ kind: 'waiting' });
      expect(await waits.register(newWait('wfr_c', 'order-2'), T0)).toEqual({ kind: 'waiting' });
      const listed = await waits.listWaits('order-1', 10);
      expect(listed.map((w) => w.runId)).toEqual(['wfr_a', 'wfr_b']);
      expect(listed[0]).toEqual(newWait('wfr_a', 'order-1'));
      const taken = await waits.takeWaits('order-1', T0 + 5);
      expect(taken.map((w) => w.runId).sort()).toEqual(['wfr_a', 'wfr_b']);
      expect(await waits.takeWaits('order-1', T0 + 6)).toEqual([]);
      expect((await waits.listWaits('order-2', 10)).map((w) => w.runId)).toEqual(['wfr_c']);
    });

    it("a notify for a run with no wait yet is kept, and the run's next wait takes it (lookback)", async () => {
      const waits = waitsOf(await open());
      expect(
        await waits.notifyRun({
          runId: 'wfr_a',
          eventId: 'approved',
          data: '{"ok":true}',
          now: T0,
          keepUntil: T0 + 1_000,
        }),
      ).toEqual({
        waits: [],
        kept: true,
      });
      // Another run waiting on the same event id does not get it: the kept event is the run's.
      expect(await waits.register(newWait('wfr_b', 'approved'), T0 + 1)).toEqual({ kind: 'waiting' });
      expect(await waits.register(newWait('wfr_a', 'approved'), T0 + 2)).toEqual({
        kind: 'kept-event',
        data: '{"ok":true}',
      });
      // Taken once: the next wait of that run waits.
      expect(await waits.register(newWait('wfr_a', 'approved', { stepId: 3 }), T0 + 3)).toEqual({ kind: 'waiting' });
    });

    it('kept events are taken oldest first, and not after they expire', async () => {
      const waits = waitsOf(await open());
      await waits.notifyRun({ runId: 'wfr_a', eventId: 'e', data: 'first', now: T0, keepUntil: T0 + 1_000 });
      await waits.notifyRun({ runId: 'wfr_a', eventId: 'e', data: 'second', now: T0 + 1, keepUntil: T0 + 1_000 });
      expect(await waits.register(newWait('wfr_a', 'e', { stepId: 1 }), T0 + 2)).toEqual({
        kind: 'kept-event',
        data: 'first',
      });
      expect(await waits.register(newWait('wfr_a', 'e', { stepId: 2 }), T0 + 1_000)).toEqual({ kind: 'waiting' });
    });

    it("keeps at most maxKept events for a run and event (a webhook's lookback), counting unexpired ones only", async () => {
      const waits = waitsOf(await open());
      const notify = (eventId: string, data: string, now: number, keepUntil = T0 + 1_000) =>
        waits.notifyRun({ runId: 'wfr_a', eventId, data, now, keepUntil, maxKept: 2 });
      expect(await notify('e', 'one', T0, T0 + 10)).toEqual({ waits: [], kept: true });
      expect(await notify('e', 'two', T0)).toEqual({ waits: [], kept: true });
      expect(await notify('e', 'three', T0 + 1)).toEqual({ waits: [], kept: false });
      expect(await notify('other', 'x', T0 + 1)).toEqual({ waits: [], kept: true });
      // The first expired: room for one more.
      expect(await notify('e', 'four', T0 + 10)).toEqual({ waits: [], kept: true });
      expect(await waits.register(newWait('wfr_a', 'e', { stepId: 1 }), T0 + 11)).toEqual({
        kind: 'kept-event',
        data: 'two',
      });
    });

    it("a run-targeted notify takes only that run's waits and keeps nothing when it found one", async () => {
      const waits = waitsOf(await open());
      await waits.register(newWait('wfr_a', 'e'), T0);
      await waits.register(newWait('wfr_b', 'e'), T0);
      const { waits: taken, kept } = await waits.notifyRun({
        runId: 'wfr_a',
        eventId: 'e',
        data: 'data',
        now: T0 + 1,
        keepUntil: T0 + 1_000,
      });
      expect(kept).toBe(false);
      expect(taken.map((w) => w.runId)).toEqual(['wfr_a']);
      expect((await waits.listWaits('e', 10)).map((w) => w.runId)).toEqual(['wfr_b']);
      expect(await waits.register(newWait('wfr_a', 'e', { stepId: 5 }), T0 + 2)).toEqual({ kind: 'waiting' });
    });

    it('timed-out waits are leased once, stay out of a notify while leased, and come back when the lease ends', async () => {
      const waits = waitsOf(await open());
      await waits.register(newWait('wfr_a', 'e', { timeoutMs: 100 }), T0);
      await waits.register(newWait('wfr_b', 'e', { timeoutMs: 10_000 }), T0);
      expect(await waits.claimTimedOut(T0 + 99, 1_000, 10)).toEqual([]);
      const due = await waits.claimTimedOut(T0 + 100, 1_000, 10);
      expect(due.map((w) => w.runId)).toEqual(['wfr_a']);
      expect(await waits.claimTimedOut(T0 + 200, 1_000, 10)).toEqual([]);
      // A notify while the timeout is being delivered leaves that wait to the timeout.
      expect((await waits.takeWaits('e', T0 + 300)).map((w) => w.runId)).toEqual(['wfr_b']);
      // The deliverer died: after its lease another takes the timeout.
      expect((await waits.claimTimedOut(T0 + 1_100, 1_000, 10)).map((w) => w.runId)).toEqual(['wfr_a']);
      await waits.deleteWait('wfr_a', 'e', 2);
      expect(await waits.claimTimedOut(T0 + 5_000, 1_000, 10)).toEqual([]);
      expect(await waits.listWaits('e', 10)).toEqual([]);
    });

    it('a run that ended waits no more: its waits are neither listed nor notified', async () => {
      const store = await open();
      const ended = storeRunId(1);
      const live = storeRunId(2);
      await store.createRun(newRun(1));
      await store.createRun(newRun(2));
      await waitsOf(store).register(newWait(ended, 'e'), T0);
      await waitsOf(store).register(newWait(live, 'e'), T0);
      await store.apply([{ type: 'run', runId: ended, patch: { status: 'cancelled', finishedAt: T0 }, at: T0 }]);
      expect((await waitsOf(store).listWaits('e', 10)).map((w) => w.runId)).toEqual([live]);
      expect((await waitsOf(store).takeWaits('e', T0 + 1)).map((w) => w.runId)).toEqual([live]);
      // Dropped, not kept for later: a resumed run would register its wait again.
      expect(
        await waitsOf(store).notifyRun({
          runId: ended,
          eventId: 'e',
          data: 'late',
          now: T0 + 2,
          keepUntil: T0 + 1_000,
        }),
      ).toEqual({ waits: [], kept: true });
    });

    it('a wait inside Promise.all is keyed by its target step', async () => {
      const waits = waitsOf(await open());
      const a = newWait('wfr_a', 'e');
      a.step = { stepId: 0, stepName: 'a', stepType: 'Wait', concurrent: 2, targetStep: 3 };
      const b = newWait('wfr_a', 'e');
      b.step = { stepId: 0, stepName: 'b', stepType: 'Wait', concurrent: 2, targetStep: 4 };
      await waits.register(a, T0);
      await waits.register(b, T0);
      expect((await waits.listWaits('e', 10)).map((w) => w.step.targetStep).sort()).toEqual([3, 4]);
      await waits.deleteWait('wfr_a', 'e', 3);
      expect((await waits.listWaits('e', 10)).map((w) => w.step.stepName)).toEqual(['b']);
    });

    if (options.peer) {
      const peer = options.peer;
      it("two runners racing a run's wait against its notify: the event is never lost", async () => {
        const first = await open();
        const second = await peer();
        for (let i = 0; i < 20; i++) {
          const runId = `wfr_race${i}`;
          const [registered, notified] = await Promise.all([
            waitsOf(first).register(newWait(runId, 'e'), T0),
            waitsOf(second).notifyRun({
              runId: runId,
              eventId: 'e',
              data: `data${i}`,
              now: T0,
              keepUntil: T0 + 60_000,
            }),
          ]);
          // Either the notify found the wait, or the wait found the kept event: exactly one.
          const delivered = (registered.kind === 'kept-event' ? 1 : 0) + notified.waits.length;
          expect(delivered, `round ${i}`).toBe(1);
        }
      });

      it('two runners claiming timeouts at once never take the same wait', async () => {
        const first = await open();
        const second = await peer();
        for (let i = 0; i < 30; i++) await waitsOf(first).register(newWait(`wfr_t${i}`, 'e', { timeoutMs: 1 }), T0);
        const [a, b] = await Promise.all([
          waitsOf(first).claimTimedOut(T0 + 10, 5_000, 20),
          waitsOf(second).claimTimedOut(T0 + 10, 5_000, 20),
        ]);
        const ids = [...a, ...b].map((w) => w.runId);
        expect(new Set(ids).size).toBe(ids.length);
        expect(ids).toHaveLength(30);
      });
    }
  });
}
