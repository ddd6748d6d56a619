import { afterEach, describe, expect, it } from 'vitest';
import { StartBatch } from '../../runner-core/commit/start-batch.js';
import { openSqliteStore, type SqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { NewRun, Store } from '../../runner-core/store/types.js';
import { newRun, runId } from './store-fixtures.js';

let store: SqliteStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** A real SQLite store whose `createRuns` calls are recorded (their sizes). */
async function recorded(): Promise<{ store: Store; calls: number[] }> {
  store = await openSqliteStore(':memory:');
  const real = store;
  const calls: number[] = [];
  const createRuns = (inputs: readonly NewRun[]) => {
    calls.push(inputs.length);
    return real.createRuns(inputs);
  };
  const get = (target: SqliteStore, key: PropertyKey): unknown => {
    if (key === 'createRuns') return createRuns;
    const value: unknown = Reflect.get(target, key);
    // Bound: the store keeps its state in private fields, which the proxy cannot reach.
    return typeof value === 'function' ? value.bind(target) : value;
  };
  return { store: new Proxy(real, { get }), calls };
}

describe('StartBatch', () => {
  it('commits the starts made in one turn of the event loop together, and later ones in a batch of their own', async () => {
    const { store: s, calls } = await recorded();
    const batch = new StartBatch(s);
    const burst = await Promise.all([1, 2, 3, 4, 5].map((n) => batch.create(newRun(n))));
    expect(burst.map((r) => [r.run.id, r.created])).toEqual([1, 2, 3, 4, 5].map((n) => [runId(n), true]));
    const later = await batch.create(newRun(6));
    expect(later.created).toBe(true);
    expect(calls).toEqual([5, 1]);
    expect((await s.getRun(runId(3)))?.status).toBe('queued');
  });

  it('fails only the start that cannot be created; the others in its batch are committed', async () => {
    const { store: s } = await recorded();
    await s.createRun(newRun(1));
    const batch = new StartBatch(s);
    const results = await Promise.allSettled([
      batch.create(newRun(2)),
      batch.create(newRun(1)),
      batch.create(newRun(3)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await s.getRun(runId(2)))?.id).toBe(runId(2));
    expect((await s.getRun(runId(3)))?.id).toBe(runId(3));
  });
});
