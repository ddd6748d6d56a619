import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LeaseLostError } from '../../runner-core/store/errors.js';
import type { Change, StepLog, Store } from '../../runner-core/store/types.js';
import { T0, claimRun, failed, newRun, runId, started, succeeded } from './store-fixtures.js';

const logs = (
  id: string,
  index: number,
  attempt: number,
  status: 'succeeded' | 'failed',
  messages: string[],
  dropped = 0,
): Change & StepLog => ({
  type: 'step-logs',
  runId: id,
  index,
  name: `s${index}`,
  attempt,
  status,
  at: T0 + attempt * 10,
  lines: messages.map((message, i) => ({
    at: T0 + i,
    level: i % 2 === 0 ? 'log' : 'warn',
    message,
    ...(i === 0 && { fields: { n: i, nested: { ok: true } } }),
  })),
  dropped,
});

/** Step logs: one row per step execution that printed, every attempt kept, read back by step then attempt. */
export function describeStepLogs(open: () => Promise<Store> | Store): void {
  describe('step logs', () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
      await store.createRun(newRun(1));
      await store.createRun(newRun(2));
    });
    afterEach(async () => {
      await store.close();
    });

    it('keeps each attempt of each step, failed ones too, in step then attempt order', async () => {
      const id = runId(1);
      const first = logs(id, 1, 1, 'failed', ['try 1', 'failing'], 3);
      const second = logs(id, 1, 2, 'succeeded', ['try 2']);
      const zero = logs(id, 0, 1, 'succeeded', ['zero']);
      await store.apply([started(id, 0, T0), succeeded(id, 0, '1', T0 + 1), zero, started(id, 1, T0 + 2)]);
      await store.apply([failed(id, 1, 'retrying', T0 + 3), first]);
      await store.apply([
        started(id, 1, T0 + 4),
        succeeded(id, 1, '2', T0 + 5),
        second,
        logs(runId(2), 0, 1, 'succeeded', ['other run']),
      ]);
      const strip = ({ type: _type, ...log }: Change & StepLog): StepLog => log;
      expect(await store.listStepLogs(id)).toEqual([strip(zero), strip(first), strip(second)]);
      expect((await store.listStepLogs(runId(2))).map((log) => log.lines[0]?.message)).toEqual(['other run']);
      expect(await store.listStepLogs(runId(3))).toEqual([]);
      // The step rows are as without logs.
      expect((await store.listSteps(id)).map((s) => [s.index, s.status, s.failures])).toEqual([
        [0, 'succeeded', 0],
        [1, 'succeeded', 1],
      ]);
    });

    it('a repeated commit of the same attempt changes nothing', async () => {
      const id = runId(1);
      await store.apply([started(id, 0, T0), logs(id, 0, 1, 'succeeded', ['once'])]);
      await store.apply([logs(id, 0, 1, 'succeeded', ['twice'])]);
      expect((await store.listStepLogs(id)).map((log) => log.lines.map((l) => l.message))).toEqual([['once']]);
    });

    it("keeps the logs of a drive's last commit, which also gives the lease back", async () => {
      const id = runId(1);
      await claimRun(store, id, { now: T0 + 5, owner: 'runner-a', leaseMs: 30_000 });
      await store.apply([started(id, 0, T0)], { owner: 'runner-a' });
      await store.apply(
        [
          failed(id, 0, 'retrying', T0 + 6),
          logs(id, 0, 1, 'failed', ['last words']),
          { type: 'release', runId: id, owner: 'runner-a' },
          { type: 'run', runId: id, patch: { attempts: 1 }, at: T0 + 6 },
        ],
        { owner: 'runner-a' },
      );
      expect((await store.listStepLogs(id)).map((log) => [log.status, log.lines[0]?.message])).toEqual([
        ['failed', 'last words'],
      ]);
      expect((await store.getRun(id))?.attempts).toBe(1);
    });

    it('is fenced like every drive commit: a runner that lost the lease writes no logs', async () => {
      const id = runId(1);
      await claimRun(store, id, { now: T0 + 5, owner: 'runner-a', leaseMs: 30_000 });
      await expect(store.apply([logs(id, 0, 1, 'succeeded', ['stale'])], { owner: 'runner-b' })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      await expect(
        store.apply([started(id, 0, T0), logs(id, 0, 1, 'succeeded', ['stale'])], { owner: 'runner-b' }),
      ).rejects.toBeInstanceOf(LeaseLostError);
      expect(await store.listStepLogs(id)).toEqual([]);
      await store.apply([started(id, 0, T0), logs(id, 0, 1, 'succeeded', ['mine'])], { owner: 'runner-a' });
      expect((await store.listStepLogs(id)).map((log) => log.lines[0]?.message)).toEqual(['mine']);
    });
  });
}
