import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { Outcome } from '../../protocol/outcome.js';
import { DriveSession } from '../../serve/core/session.js';

/**
 * A host without AsyncLocalStorage (neither `globalThis.AsyncLocalStorage` nor
 * `process.getBuiltinModule`): console lines printed while a step's function runs synchronously
 * are still kept, `context.log` always is (the session knows its one step in flight), and lines
 * after an `await` are printed but not attributed to a step. The capture is set up afresh here and
 * the console, process and the shared state are put back afterwards.
 */

const KEY = Symbol.for('wfkit.step-logs');
const g = globalThis as Record<symbol, unknown>;
const saved = { state: g[KEY], log: console.log, getBuiltinModule: process.getBuiltinModule };
const printed: unknown[][] = [];

beforeAll(() => {
  delete g[KEY];
  console.log = (...args: unknown[]) => void printed.push(args);
  (process as { getBuiltinModule?: unknown }).getBuiltinModule = undefined;
});
afterAll(() => {
  console.log = saved.log;
  process.getBuiltinModule = saved.getBuiltinModule;
  if (saved.state === undefined) delete g[KEY];
  else g[KEY] = saved.state;
  vi.restoreAllMocks();
});

it('keeps synchronous console lines and context.log without AsyncLocalStorage', async () => {
  const lines: Outcome[] = [];
  await new Promise<void>((resolve) => {
    const session = new DriveSession({
      committed: [],
      timeBudgetMs: 10_000,
      emit: (o) => lines.push(o),
      close: resolve,
    });
    void (async () => {
      await session.run('step', async () => {
        console.log('before the await');
        await new Promise((r) => setTimeout(r, 1));
        console.log('after the await');
        session.log('log', 'context.log after the await');
      });
      session.finish(undefined);
    })();
  });
  const step = lines.find((l): l is Extract<Outcome, { t: 'step' }> => l.t === 'step')!;
  expect(step.logs?.lines.map((l) => l.message)).toEqual(['before the await', 'context.log after the await']);
  // Everything was printed all the same.
  expect(printed.map((args) => args[0])).toEqual([
    'before the await',
    'after the await',
    'context.log after the await',
  ]);
});
