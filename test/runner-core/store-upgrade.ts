import { expect } from 'vitest';
import type { RunPatch, Store } from '../../runner-core/store/types.js';
import { T0, newRun, runId, started, succeeded } from './store-fixtures.js';

/**
 * A run patch that sets every field of RUN_PATCH_FIELDS (run-patch.ts): `Required`, so a field
 * added there without a value here fails the typecheck, and a patch line either store builds
 * wrong (or leaves out) fails the read-back below.
 */
export const EVERY_PATCH_FIELD: Required<RunPatch> = {
  status: 'failed',
  nextAt: T0 + 10,
  failures: 2,
  finishedAt: T0 + 11,
  output: '"out"',
  error: { name: 'Error', message: 'boom' },
  attempts: 3,
  unreachableSince: T0 + 12,
  failureCall: 'pending',
  failureCallAttempts: 4,
  alert: 'pending',
  alertAttempts: 5,
  failureCallNextAt: T0 + 13,
  alertNextAt: T0 + 14,
};

/**
 * What a store opened on an upgraded database must do with its current schema and, on
 * PostgreSQL, its current stored functions: steps, step logs, a patch of every field, notify.
 */
export async function expectCurrentStoreWorks(store: Store, n = 900): Promise<void> {
  const id = runId(n);
  await store.createRun(newRun(n));
  await store.apply([
    started(id, 0, T0 + 1),
    succeeded(id, 0, '"a"', T0 + 2),
    { type: 'executions-reported', runId: id, index: 0, count: 2 },
    {
      type: 'step-logs',
      runId: id,
      index: 0,
      attempt: 1,
      name: 's0',
      status: 'succeeded',
      at: T0 + 2,
      lines: [],
      dropped: 0,
    },
    {
      type: 'step-suspended',
      runId: id,
      index: 1,
      name: 'w',
      kind: 'wait',
      group: null,
      until: null,
      eventId: `ev-${n}`,
      request: null,
      at: T0 + 3,
    },
  ]);
  const event = { eventId: `ev-${n}`, data: '{}', output: '"e"', now: T0 + 4, keepUntil: T0 + 5 };
  const woke = await store.deliverEvent(event);
  expect(woke).toEqual([id]);
  await store.apply([{ type: 'run', runId: id, patch: EVERY_PATCH_FIELD, at: T0 + 20 }]);
  const { error: _error, ...plain } = EVERY_PATCH_FIELD;
  const expected = { ...plain, error: { message: 'boom' }, updatedAt: T0 + 20, stepsDone: 2 };
  expect(await store.getRun(id)).toMatchObject(expected);
  const steps = (await store.listSteps(id)).map((step) => [step.status, step.reportedExecutions]);
  expect(steps).toEqual([
    ['succeeded', 3],
    ['succeeded', 1],
  ]);
  expect(await store.listStepLogs(id)).toHaveLength(1);
}
