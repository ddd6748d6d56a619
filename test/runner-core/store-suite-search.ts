import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Change, RunQuery, Store } from '../../runner-core/store/types.js';
import { T0, newRun, runId } from './store-fixtures.js';

/**
 * Finding runs (`listRuns` filters), on every store: each filter alone, combined, and paged.
 *
 * Twelve runs, created a second apart (run n at T0 + n s):
 *   n % 3 === 0  →  https://shop.test/api/checkout   the others alternate between
 *   https://shop.test/api/refund (odd) and http://other.test/wf (even);
 *   runs 3, 6 and 9 failed at step "charge" (run 9 also had a retried "email"), run 4 failed at
 *   "email"; 5 and 10 completed; 12 was cancelled; the rest are queued.
 */
const CHECKOUT = 'https://shop.test/api/checkout';
const REFUND = 'https://shop.test/api/refund';
const OTHER = 'http://other.test/wf';
const at = (n: number): number => T0 + n * 1000;
const urlOf = (n: number): string => (n % 3 === 0 ? CHECKOUT : n % 2 === 1 ? REFUND : OTHER);

function stepFailed(n: number, index: number, name: string, status: 'retrying' | 'failed'): Change[] {
  const id = runId(n);
  return [
    { type: 'step-started', runId: id, index, name, kind: 'run', group: null, at: at(n) + 10 },
    {
      type: 'step-failed',
      runId: id,
      index,
      name,
      kind: 'run',
      status,
      at: at(n) + 20,
      durationMs: 10,
      error: { name: 'Error', message: `${name} broke` },
    },
  ];
}
const finish = (n: number, status: 'completed' | 'failed' | 'cancelled'): Change => ({
  type: 'run',
  runId: runId(n),
  at: at(n) + 30,
  patch: { status, finishedAt: at(n) + 30, nextAt: null },
});

export function describeSearch(open: () => Promise<Store> | Store): void {
  describe('listRuns: finding runs', () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
      for (let n = 1; n <= 12; n++) await store.createRun(newRun(n, { url: urlOf(n), now: at(n) }));
      await store.apply([
        ...stepFailed(3, 0, 'charge', 'failed'),
        finish(3, 'failed'),
        ...stepFailed(6, 1, 'charge', 'failed'),
        finish(6, 'failed'),
        ...stepFailed(9, 0, 'email', 'retrying'),
        ...stepFailed(9, 1, 'charge', 'failed'),
        finish(9, 'failed'),
        ...stepFailed(4, 0, 'email', 'failed'),
        finish(4, 'failed'),
        finish(5, 'completed'),
        finish(10, 'completed'),
        finish(12, 'cancelled'),
      ]);
    });
    afterEach(async () => {
      await store.close();
    });

    const ids = async (query: RunQuery): Promise<number[]> =>
      (await store.listRuns(query)).runs.map((run) => Number(run.id.slice(4)));

    it('filters by one status or several', async () => {
      expect(await ids({ status: 'failed' })).toEqual([9, 6, 4, 3]);
      expect(await ids({ status: ['completed', 'cancelled'] })).toEqual([12, 10, 5]);
      expect(await ids({ status: ['failed'] })).toEqual([9, 6, 4, 3]);
    });

    it('filters by workflow URL, exactly or by prefix', async () => {
      expect(await ids({ url: CHECKOUT })).toEqual([12, 9, 6, 3]);
      expect(await ids({ url: 'https://shop.test/api' })).toEqual([]);
      expect(await ids({ urlPrefix: 'https://shop.test/' })).toEqual([12, 11, 9, 7, 6, 5, 3, 1]);
      expect(await ids({ urlPrefix: 'http://' })).toEqual([10, 8, 4, 2]);
      expect(await ids({ urlPrefix: 'https://shop.test/api/refund' })).toEqual([11, 7, 5, 1]);
    });

    it('treats LIKE wildcards in a prefix as plain characters', async () => {
      expect(await ids({ urlPrefix: 'https://shop%' })).toEqual([]);
      expect(await ids({ urlPrefix: 'https://shop_test' })).toEqual([]);
      expect(await ids({ idPrefix: 'wfr_%' })).toEqual([]);
    });

    it('answers odd but valid text and times with no match rather than an error', async () => {
      for (const query of [
        { urlPrefix: '\\' },
        { idPrefix: '\u{10ffff}' },
        { urlPrefix: 'https://shop.test/\u{10ffff}' },
        { url: '💥' },
        { failedStep: "'; DROP TABLE runs; --" },
        { createdAfter: 10_000_000_000_000_000 },
        { createdBefore: -1 },
        { createdAfter: 0.5, createdBefore: 1.5 },
      ] satisfies RunQuery[]) {
        expect(await ids(query), JSON.stringify(query)).toEqual([]);
      }
      expect(await ids({})).toHaveLength(12);
    });

    it('filters by a creation time range: from inclusive, to exclusive', async () => {
      expect(await ids({ createdAfter: at(4), createdBefore: at(7) })).toEqual([6, 5, 4]);
      expect(await ids({ createdAfter: at(11) })).toEqual([12, 11]);
      expect(await ids({ createdBefore: at(2) })).toEqual([1]);
      expect(await ids({ createdAfter: at(7), createdBefore: at(7) })).toEqual([]);
    });

    it('filters by the name of a step that failed for good (a retried attempt does not count)', async () => {
      expect(await ids({ failedStep: 'charge' })).toEqual([9, 6, 3]);
      expect(await ids({ failedStep: 'email' })).toEqual([4]);
      expect(await ids({ failedStep: 'nothing' })).toEqual([]);
    });

    it('finds a run by an id prefix', async () => {
      expect(await ids({ idPrefix: runId(7) })).toEqual([7]);
      expect(await ids({ idPrefix: runId(10).slice(0, -1) })).toEqual([12, 11, 10]);
      expect(await ids({ idPrefix: 'wfr_' })).toHaveLength(12);
      expect(await ids({ idPrefix: 'wfr_1' })).toEqual([]);
    });

    it('combines every filter given', async () => {
      expect(await ids({ status: 'failed', url: CHECKOUT, failedStep: 'charge', createdAfter: at(4) })).toEqual([9, 6]);
      expect(await ids({ status: ['failed', 'queued'], urlPrefix: 'http://' })).toEqual([8, 4, 2]);
      expect(await ids({ status: 'completed', failedStep: 'charge' })).toEqual([]);
    });

    it('pages a filtered list with the cursor, each page filtered', async () => {
      const seen: number[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.listRuns({
          urlPrefix: 'https://shop.test/',
          limit: 3,
          ...(cursor !== undefined && { cursor }),
        });
        seen.push(...page.runs.map((run) => Number(run.id.slice(4))));
        cursor = page.nextCursor ?? undefined;
        pages++;
      } while (cursor !== undefined && pages < 10);
      expect(pages).toBe(3);
      expect(seen).toEqual([12, 11, 9, 7, 6, 5, 3, 1]);
    });
  });
}
