import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewMessage } from '../../runner-core/qstash/messages/store.js';
import { prunePass, type PruneParts } from '../../runner-core/retention/prune.js';
import { openQstashStores } from '../../runner-core/qstash/stores.js';
import type { Store } from '../../runner-core/store/types.js';
import { T0, attempt, newRun, runId, started, succeeded } from './store-fixtures.js';

/**
 * Retention on every store (store-suite.ts): what a prune keeps (unfinished and recent runs,
 * anything still owed), what it removes (old finished runs and every row under them, QStash ones
 * included), dry runs, the cursor, and two runners pruning one database.
 */

const DAY = 86_400_000;
const OLD = T0 + 10;
const CUTOFF = T0 + DAY;

function parts(store: Store): PruneParts {
  const qstash = openQstashStores(store.connection)!;
  return { retention: store.retention, messages: qstash.messages, waits: qstash.waits };
}

/** A run with two steps, two attempts and a step log, finished at `finishedAt` (or left running). */
async function seedRun(
  store: Store,
  n: number,
  end: {
    status: 'completed' | 'failed' | 'cancelled' | 'running';
    at?: number;
    failureCall?: 'pending';
    alert?: 'pending';
  } = { status: 'completed' },
): Promise<string> {
  const id = runId(n);
  await store.createRun(newRun(n));
  const at = end.at ?? OLD;
  await store.apply([
    started(id, 0, T0),
    succeeded(id, 0, '"a"', T0 + 1),
    succeeded(id, 1, '"b"', T0 + 2),
    { type: 'attempt', attempt: attempt(id, 1) },
    { type: 'attempt', attempt: attempt(id, 2) },
    {
      type: 'step-logs',
      runId: id,
      index: 0,
      attempt: 1,
      name: 's0',
      status: 'succeeded',
      at: T0 + 1,
      lines: [],
      dropped: 0,
    },
    {
      type: 'run',
      runId: id,
      at,
      patch:
        end.status === 'running'
          ? { status: 'running' }
          : {
              status: end.status,
              finishedAt: at,
              ...(end.failureCall && { failureCall: end.failureCall }),
              ...(end.alert && { alert: end.alert }),
            },
    },
  ]);
  return id;
}

function message(id: string, overrides: Partial<NewMessage> = {}): NewMessage {
  return {
    id,
    runId: null,
    callType: null,
    kind: 'plain',
    dueAt: OLD,
    dedupKey: null,
    flow: null,
    now: OLD,
    spec: {
      destination: 'http://127.0.0.1:9/x',
      method: 'POST',
      body: id,
      headers: {},
      retries: 0,
      retryDelay: null,
      timeoutMs: null,
      callback: null,
      failureCallback: null,
      redact: [],
    },
    ...overrides,
  };
}

/** An Upstash-protocol run with a delivered message (and, with `owed`, a pending failure callback), a wait and a kept event, finished long ago. */
async function seedUpstashRun(store: Store, id: string, owed = false): Promise<void> {
  const messages = openQstashStores(store.connection)!.messages;
  await messages.createRun(
    {
      id,
      url: 'http://127.0.0.1:9/wf',
      body: '{}',
      headers: {},
      retries: 3,
      retryDelayMs: 1000,
      idempotencyKey: null,
      config: '{}',
      now: OLD,
    },
    message(`${id}-m1`, { runId: id, callType: 'step', kind: 'workflow' }),
  );
  const [claimed] = await messages.claimDue({ now: OLD, limit: 1, owner: 'w', leaseMs: 1000 });
  await messages.settle(claimed!.id, 'w', { status: 'delivered' }, OLD);
  if (owed)
    await messages.insertMessages([
      message(`${id}-fail`, { runId: id, callType: 'failureCall', dueAt: T0 + 100 * DAY }),
    ]);
  await openQstashStores(store.connection)!.waits.register(
    {
      runId: id,
      eventId: 'e',
      url: 'http://127.0.0.1:9/wf',
      step: { stepId: 2, stepName: 'w', stepType: 'Wait', concurrent: 1 },
      timeout: '7d',
      createdAt: OLD,
      deadline: OLD + 7 * DAY,
      headers: {},
    },
    OLD,
  );
  await openQstashStores(store.connection)!.waits.notifyRun({
    runId: id,
    eventId: 'other',
    data: 'data',
    now: OLD,
    keepUntil: T0 + 100 * DAY,
  });
  await store.apply([
    { type: 'run', runId: id, at: OLD, patch: { status: owed ? 'failed' : 'completed', finishedAt: OLD } },
  ]);
}

async function rowsOf(store: Store, id: string): Promise<number> {
  const [steps, attempts, logs, messages] = await Promise.all([
    store.listSteps(id),
    store.listAttempts(id),
    store.listStepLogs(id),
    openQstashStores(store.connection)!.messages.runMessages(id),
  ]);
  return steps.length + attempts.length + logs.length + messages.length;
}

export function describeRetention(open: () => Promise<Store> | Store, peer?: () => Promise<Store> | Store): void {
  describe('retention', () => {
    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    it('prunes old finished runs with every row under them, and keeps unfinished, recent and owing runs', async () => {
      const completed = await seedRun(store, 1);
      const failed = await seedRun(store, 2, { status: 'failed' });
      const cancelled = await seedRun(store, 3, { status: 'cancelled' });
      const running = await seedRun(store, 4, { status: 'running' });
      const recent = await seedRun(store, 5, { status: 'completed', at: CUTOFF + 1 });
      const owesCall = await seedRun(store, 6, { status: 'failed', failureCall: 'pending' });
      const owesAlert = await seedRun(store, 7, { status: 'failed', alert: 'pending' });

      const result = await prunePass(parts(store), {
        finishedBefore: CUTOFF,
        dryRun: false,
        after: null,
        maxRuns: 1000,
      });

      expect(result).toMatchObject({ runs: 3, steps: 6, attempts: 6, stepLogs: 3, kept: 0, cursor: null, busy: false });
      for (const id of [completed, failed, cancelled]) {
        expect(await store.getRun(id)).toBeUndefined();
        expect(await rowsOf(store, id)).toBe(0);
      }
      for (const id of [running, recent, owesCall, owesAlert]) {
        expect(await store.getRun(id)).toBeDefined();
        expect(await rowsOf(store, id)).toBe(5);
      }
      // Nothing old enough is left: a second pass finds nothing.
      expect(
        await prunePass(parts(store), { finishedBefore: CUTOFF, dryRun: false, after: null, maxRuns: 1000 }),
      ).toMatchObject({ runs: 0, steps: 0 });
    });

    it('counts on a dry run and deletes nothing', async () => {
      await seedRun(store, 1);
      await seedRun(store, 2, { status: 'running' });
      const dry = await prunePass(parts(store), { finishedBefore: CUTOFF, dryRun: true, after: null, maxRuns: 1000 });
      expect(dry).toMatchObject({ runs: 1, steps: 2, attempts: 2, stepLogs: 1, messages: 0, cursor: null });
      expect(await rowsOf(store, runId(1))).toBe(5);
      expect(await store.getRun(runId(1))).toBeDefined();
    });

    it('walks in bounded batches and passes, oldest first, going on from its cursor', async () => {
      for (let n = 1; n <= 7; n++) await seedRun(store, n, { status: 'completed', at: OLD + (8 - n) });
      const batches: number[] = [];
      const first = await prunePass(parts(store), {
        finishedBefore: CUTOFF,
        dryRun: false,
        after: null,
        maxRuns: 4,
        batchSize: 3,
        onBatch: (totals) => batches.push(totals.runs),
      });
      expect(first.runs).toBe(4);
      expect(batches).toEqual([3, 4]);
      // The oldest went first: runs 7, 6, 5, 4 finished earliest.
      expect(first.cursor).toEqual({ finishedAt: OLD + 4, id: runId(4) });
      expect(await store.getRun(runId(4))).toBeUndefined();
      expect(await store.getRun(runId(3))).toBeDefined();
      const rest = await prunePass(parts(store), {
        finishedBefore: CUTOFF,
        dryRun: false,
        after: first.cursor,
        maxRuns: 4,
      });
      expect(rest).toMatchObject({ runs: 3, cursor: null });
    });

    it('finds its candidates from the index, a page at a time', async () => {
      for (let n = 1; n <= 3; n++) await seedRun(store, n, { status: 'completed', at: OLD + n });
      const page = await store.retention.candidates({ finishedBefore: CUTOFF, after: null, limit: 2 });
      expect(page).toEqual([
        { id: runId(1), finishedAt: OLD + 1 },
        { id: runId(2), finishedAt: OLD + 2 },
      ]);
      expect(await store.retention.candidates({ finishedBefore: CUTOFF, after: page[1]!, limit: 2 })).toEqual([
        { id: runId(3), finishedAt: OLD + 3 },
      ]);
      expect(await store.retention.candidates({ finishedBefore: OLD + 2, after: null, limit: 10 })).toEqual([
        { id: runId(1), finishedAt: OLD + 1 },
      ]);
    });

    it('checks each run again as it deletes: one resumed since it was listed stays', async () => {
      const id = await seedRun(store, 1, { status: 'failed' });
      const [candidate] = await store.retention.candidates({ finishedBefore: CUTOFF, after: null, limit: 10 });
      expect(candidate?.id).toBe(id);
      await store.resumeRun(id, T0 + 2 * DAY);
      expect(await store.retention.deleteRuns([id], { finishedBefore: CUTOFF, dryRun: false })).toEqual({
        runs: 0,
        steps: 0,
        attempts: 0,
        stepLogs: 0,
      });
      expect((await store.getRun(id))?.status).toBe('queued');
    });

    it('prunes an Upstash-protocol run with its messages, config, waits and kept events; keeps one that still owes its failure callback', async () => {
      await seedUpstashRun(store, 'wfr_upstash-done');
      await seedUpstashRun(store, 'wfr_upstash-owed', true);
      await openQstashStores(store.connection)!.messages.insertMessages([
        message('plain-pending', { dueAt: T0 + 100 * DAY }),
      ]);
      await openQstashStores(store.connection)!.messages.insertMessages([message('plain-done')]);
      const [plain] = await openQstashStores(store.connection)!.messages.claimDue({
        now: OLD,
        limit: 1,
        owner: 'w',
        leaseMs: 1000,
      });
      await openQstashStores(store.connection)!.messages.settle(plain!.id, 'w', { status: 'delivered' }, OLD);

      const dry = await prunePass(parts(store), { finishedBefore: CUTOFF, dryRun: true, after: null, maxRuns: 100 });
      expect(dry).toMatchObject({ runs: 1, messages: 2, waits: 2, kept: 1 });

      const result = await prunePass(parts(store), {
        finishedBefore: CUTOFF,
        dryRun: false,
        after: null,
        maxRuns: 100,
      });
      expect(result).toMatchObject({ runs: 1, messages: 2, waits: 2, kept: 1 });
      expect(await store.getRun('wfr_upstash-done')).toBeUndefined();
      expect(await openQstashStores(store.connection)!.messages.runConfig('wfr_upstash-done')).toBeUndefined();
      expect(await openQstashStores(store.connection)!.messages.runMessages('wfr_upstash-done')).toEqual([]);
      expect(await openQstashStores(store.connection)!.waits.listWaits('e', 10)).toEqual([]);
      // The owing run keeps everything, its message still due.
      expect(await store.getRun('wfr_upstash-owed')).toBeDefined();
      expect(
        (await openQstashStores(store.connection)!.messages.runMessages('wfr_upstash-owed')).map((m) => m.status),
      ).toEqual(['delivered', 'pending']);
      expect(await openQstashStores(store.connection)!.messages.runConfig('wfr_upstash-owed')).toBe('{}');
      // The pending plain message is still delivered later.
      expect(
        (
          await openQstashStores(store.connection)!.messages.claimDue({
            now: T0 + 100 * DAY,
            limit: 10,
            owner: 'w',
            leaseMs: 1000,
          })
        ).map((m) => m.id),
      ).toEqual(['wfr_upstash-owed-fail', 'plain-pending']);
    });

    it('reports its size in bytes', async () => {
      const before = await store.retention.sizeBytes();
      expect(before).toBeGreaterThan(0);
    });

    it.skipIf(!peer)('prunes each run once when two runners prune at the same moment', async () => {
      const other = await peer!();
      try {
        for (let n = 1; n <= 60; n++) await seedRun(store, n);
        const both = await Promise.all(
          [store, other].map((s) =>
            prunePass(parts(s), { finishedBefore: CUTOFF, dryRun: false, after: null, maxRuns: 1000, batchSize: 7 }),
          ),
        );
        expect(both[0]!.runs + both[1]!.runs).toBe(60);
        expect(both[0]!.steps + both[1]!.steps).toBe(120);
        expect(await store.retention.candidates({ finishedBefore: CUTOFF, after: null, limit: 10 })).toEqual([]);
      } finally {
        await other.close();
      }
    });
  });
}
