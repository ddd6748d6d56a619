import { describe, expect, it } from 'vitest';
import { CommitQueue } from '../../runner-core/commit/commit-queue.js';
import { LeaseLostError } from '../../runner-core/store/errors.js';
import type { ApplyOptions, Change, Store } from '../../runner-core/store/types.js';

const patch = (runId: string): Change => ({ type: 'run', runId, patch: { attempts: 1 }, at: 1 });

/** A store that records each `apply` and rejects the changes of runs in `lost` as a fenced store would. */
function recordingStore(lost: ReadonlySet<string> = new Set()): {
  store: Store;
  applied: { runs: string[]; owner: string | undefined }[];
} {
  const applied: { runs: string[]; owner: string | undefined }[] = [];
  const store = {
    async apply(changes: readonly Change[], options: ApplyOptions = {}) {
      const runs = changes.map((c) => (c.type === 'attempt' ? c.attempt.runId : c.runId));
      const gone = runs.find((id) => lost.has(id));
      if (options.owner !== undefined && gone !== undefined) throw new LeaseLostError(gone, options.owner, 'other');
      applied.push({ runs, owner: options.owner });
    },
  } as unknown as Store;
  return { store, applied };
}

describe('CommitQueue', () => {
  it('group-commits one turn of pushes, cut where the owner changes, in order', async () => {
    const { store, applied } = recordingStore();
    const queue = new CommitQueue(store);
    await Promise.all([
      queue.push([patch('a')], 'r1'),
      queue.push([patch('b')], 'r1'),
      queue.push([patch('a')]), // an unfenced cancel between the drive's commits
      queue.push([patch('c')], 'r1'),
    ]);
    expect(applied).toEqual([
      { runs: ['a', 'b'], owner: 'r1' },
      { runs: ['a'], owner: undefined },
      { runs: ['c'], owner: 'r1' },
    ]);
  });

  it("rejects only the pushes of a run whose lease was lost; the others' changes commit", async () => {
    const { store, applied } = recordingStore(new Set(['b']));
    const queue = new CommitQueue(store);
    const results = await Promise.allSettled([
      queue.push([patch('a')], 'r1'),
      queue.push([patch('b')], 'r1'),
      queue.push([patch('c')], 'r1'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(LeaseLostError.is((results[1] as PromiseRejectedResult).reason)).toBe(true);
    expect(applied).toEqual([
      { runs: ['a'], owner: 'r1' },
      { runs: ['c'], owner: 'r1' },
    ]);
  });
});
