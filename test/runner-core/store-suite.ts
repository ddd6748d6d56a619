import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Change, Step, Store } from '../../runner-core/store/types.js';
import { T0, claimRun, attempt, failed, newRun, runId, started, succeeded } from './store-fixtures.js';
import { describeConcurrency } from './store-suite-concurrency.js';
import { describeFencing } from './store-suite-fencing.js';
import { describeFlow } from './store-suite-flow.js';
import { describeResilience } from './store-suite-resilience.js';
import { describeResume } from './store-suite-resume.js';
import { describeStepLogs } from './store-suite-step-logs.js';
import { describeAlerts } from './store-suite-alerts.js';
import { describeSearch } from './store-suite-search.js';
import { describeRetention } from './store-suite-retention.js';

export { newRun, runId } from './store-fixtures.js';

export interface StoreSuiteOptions {
  /**
   * Opens a second handle (its own connection) on the store the last `open` returned, for the
   * tests of two runners racing on one store. Absent (`:memory:`): those tests are skipped.
   */
  peer?: () => Promise<Store> | Store;
}

/**
 * The conformance suite every `Store` implementation runs (SQLite and PostgreSQL).
 * `open` must return a fresh, empty store; it is closed after each test.
 */
export function describeStore(name: string, open: () => Promise<Store> | Store, options: StoreSuiteOptions = {}): void {
  describe(`store: ${name}`, () => {
    describeFencing(open);
    describeResilience(open);
    describeConcurrency(open, options.peer);
    describeResume(open);
    describeFlow(open);
    describeStepLogs(open);
    describeAlerts(open);
    describeSearch(open);
    describeRetention(open, options.peer);

    let store: Store;
    beforeEach(async () => {
      store = await open();
    });
    afterEach(async () => {
      await store.close();
    });

    describe('runs', () => {
      it('creates a queued run, due at once, and reads it back', async () => {
        const { run, created } = await store.createRun(newRun(1));
        expect(created).toBe(true);
        expect(run).toEqual({
          id: runId(1),
          url: 'http://localhost:3000/api/wf',
          status: 'queued',
          body: '{"text":"hi"}',
          headers: { 'content-type': 'application/json' },
          createdAt: T0 + 1,
          updatedAt: T0 + 1,
          finishedAt: null,
          nextAt: T0 + 1,
          failures: 0,
          retries: 3,
          retryDelayMs: 1000,
          stepsDone: 0,
          attempts: 0,
          output: null,
          error: null,
          idempotencyKey: null,
          unreachableSince: null,
          failureCall: null,
          failureCallAttempts: 0,
          alert: null,
          alertAttempts: 0,
        });
        expect(await store.getRun(runId(1))).toEqual(run);
        expect(await store.getRun(runId(2))).toBeUndefined();
      });

      it('returns the existing run for a repeated idempotency key', async () => {
        const first = await store.createRun(newRun(1, { idempotencyKey: 'k1' }));
        const again = await store.createRun(newRun(2, { idempotencyKey: 'k1' }));
        expect(again.created).toBe(false);
        expect(again.run).toEqual(first.run);
        expect(await store.getRun(runId(2))).toBeUndefined();
        const other = await store.createRun(newRun(3, { idempotencyKey: 'k2' }));
        expect(other.created).toBe(true);
      });

      it('creates several runs in one call, each as createRun would: a stored key finds its run, a repeated one creates once', async () => {
        const stored = await store.createRun(newRun(1, { idempotencyKey: 'k1' }));
        const results = await store.createRuns([
          newRun(2),
          newRun(3, { idempotencyKey: 'k1' }),
          newRun(4, { idempotencyKey: 'k2' }),
          newRun(5, { idempotencyKey: 'k2' }),
          newRun(6, { lease: { owner: 'r1', until: T0 + 60_000 } }),
        ]);
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
        const values = results.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
        expect([values[0], values[1], values[4]].map((v) => [v?.run.id, v?.created])).toEqual([
          [runId(2), true],
          [runId(1), false],
          [runId(6), true],
        ]);
        expect(values[1]?.run).toEqual(stored.run);
        expect(values[4]?.run.status).toBe('running');
        expect(await store.getRun(runId(3))).toBeUndefined();
        // Two inputs with one new key are like two concurrent starts: one creates, the other finds it.
        expect([values[2]?.created, values[3]?.created].sort()).toEqual([false, true]);
        expect(values[2]?.run.id).toBe(values[3]?.run.id);
        expect((await store.listRuns({ limit: 10 })).runs).toHaveLength(4);
        expect((await store.getRun(runId(2)))?.status).toBe('queued');
      });

      it('settles each input of createRuns alone: one that cannot be created fails by itself', async () => {
        await store.createRun(newRun(1));
        const results = await store.createRuns([newRun(2), newRun(1), newRun(3)]);
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
        expect((await store.getRun(runId(2)))?.id).toBe(runId(2));
        expect((await store.getRun(runId(3)))?.id).toBe(runId(3));
      });

      it('lists newest first, filters by status and pages with a cursor', async () => {
        for (let n = 1; n <= 7; n++) await store.createRun(newRun(n));
        await store.apply([{ type: 'run', runId: runId(2), patch: { status: 'completed' }, at: T0 + 100 }]);
        await store.apply([{ type: 'run', runId: runId(5), patch: { status: 'completed' }, at: T0 + 100 }]);

        const all = await store.listRuns({});
        expect(all.runs.map((r) => r.id)).toEqual([7, 6, 5, 4, 3, 2, 1].map(runId));
        expect(all.nextCursor).toBeNull();

        const done = await store.listRuns({ status: 'completed' });
        expect(done.runs.map((r) => r.id)).toEqual([runId(5), runId(2)]);

        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.listRuns({ limit: 3, ...(cursor !== undefined && { cursor }) });
          seen.push(...page.runs.map((r) => r.id));
          cursor = page.nextCursor ?? undefined;
          pages++;
        } while (cursor !== undefined);
        expect(pages).toBe(3);
        expect(seen).toEqual(all.runs.map((r) => r.id));

        const queuedPage = await store.listRuns({ status: 'queued', limit: 2 });
        expect(queuedPage.runs.map((r) => r.id)).toEqual([runId(7), runId(6)]);
        const queuedNext = await store.listRuns({ status: 'queued', limit: 2, cursor: queuedPage.nextCursor ?? '' });
        expect(queuedNext.runs.map((r) => r.id)).toEqual([runId(4), runId(3)]);
      });

      it('gives no cursor when a page ends exactly at the last run', async () => {
        for (let n = 1; n <= 4; n++) await store.createRun(newRun(n));
        const first = await store.listRuns({ limit: 2 });
        expect(first.nextCursor).toBe(runId(3));
        const second = await store.listRuns({ limit: 2, cursor: runId(3) });
        expect(second.runs.map((r) => r.id)).toEqual([runId(2), runId(1)]);
        expect(second.nextCursor).toBeNull();
      });
    });

    describe('apply: what it returns', () => {
      beforeEach(async () => {
        await store.createRun(newRun(1));
        await store.createRun(newRun(2));
      });

      it('returns the runs and steps it touched, as committed, with returning; the attempts always', async () => {
        const applied = await store.apply(
          [
            started(runId(1), 0, T0 + 10),
            succeeded(runId(1), 0, '"x"', T0 + 12),
            started(runId(1), 1, T0 + 13),
            started(runId(2), 0, T0 + 12),
            { type: 'attempt', attempt: attempt(runId(1), 1) },
            { type: 'run', runId: runId(1), patch: { status: 'running' }, at: T0 + 14 },
          ],
          { returning: true },
        );
        expect(applied.attempts).toEqual([attempt(runId(1), 1)]);
        expect(applied.runs).toEqual([await store.getRun(runId(1))]);
        expect(applied.runs[0]).toMatchObject({ status: 'running', stepsDone: 1, updatedAt: T0 + 14 });
        expect(applied.steps).toEqual([...(await store.listSteps(runId(1))), ...(await store.listSteps(runId(2)))]);
        expect(applied.steps.map((step) => [step.runId, step.index, step.status])).toEqual([
          [runId(1), 0, 'succeeded'],
          [runId(1), 1, 'running'],
          [runId(2), 0, 'running'],
        ]);
      });

      it('returns only the steps a change named, or all of a run whose steps were closed', async () => {
        await store.apply([
          started(runId(1), 0, T0 + 10),
          succeeded(runId(1), 0, null, T0 + 11),
          started(runId(1), 1, T0 + 12),
        ]);
        const one = await store.apply([succeeded(runId(1), 1, null, T0 + 13)], { returning: true });
        expect(one.steps.map((step) => step.index)).toEqual([1]);
        expect(one.runs).toEqual([]);
        await store.apply([started(runId(1), 2, T0 + 14)]);
        const closed = await store.apply(
          [{ type: 'steps-closed', runId: runId(1), status: 'cancelled', at: T0 + 15 }],
          { returning: true },
        );
        expect(closed.steps.map((step) => [step.index, step.status])).toEqual([
          [0, 'succeeded'],
          [1, 'succeeded'],
          [2, 'cancelled'],
        ]);
      });

      it('reads nothing back without returning', async () => {
        const applied = await store.apply([
          started(runId(1), 0, T0 + 10),
          { type: 'attempt', attempt: attempt(runId(1), 1) },
          { type: 'run', runId: runId(1), patch: { status: 'running' }, at: T0 + 11 },
        ]);
        expect(applied).toEqual({ runs: [], steps: [], attempts: [attempt(runId(1), 1)] });
      });
    });

    describe('apply: steps', () => {
      beforeEach(async () => {
        await store.createRun(newRun(1));
      });

      it('takes a step from started to succeeded and counts it once', async () => {
        await store.apply([{ ...started(runId(1), 0, T0 + 10), group: 3 } as Change]);
        expect(await store.listSteps(runId(1))).toEqual([
          {
            runId: runId(1),
            index: 0,
            name: 's0',
            kind: 'run',
            status: 'running',
            output: null,
            error: null,
            startedAt: T0 + 10,
            finishedAt: null,
            durationMs: null,
            reportedExecutions: 1,
            failures: 0,
            group: 3,
            until: null,
            eventId: null,
            request: null,
          },
        ]);
        await store.apply([succeeded(runId(1), 0, '"first"', T0 + 15)]);
        await store.apply([succeeded(runId(1), 0, '"second"', T0 + 20)]);
        const [step] = await store.listSteps(runId(1));
        expect(step).toMatchObject({
          status: 'succeeded',
          output: '"first"',
          finishedAt: T0 + 15,
          durationMs: 5,
          reportedExecutions: 1,
        });
        expect((await store.getRun(runId(1)))?.stepsDone).toBe(1);
      });

      it('records a success that arrives without a start, and keeps steps ordered by index', async () => {
        await store.apply([succeeded(runId(1), 1, null, T0 + 30), succeeded(runId(1), 0, '1', T0 + 20)]);
        const steps = await store.listSteps(runId(1));
        expect(steps.map((s) => [s.index, s.status, s.output, s.reportedExecutions])).toEqual([
          [0, 'succeeded', '1', 1],
          [1, 'succeeded', null, 1],
        ]);
        expect(steps[0]?.startedAt).toBe(T0 + 15);
        expect((await store.getRun(runId(1)))?.stepsDone).toBe(2);
      });

      it('records a start and its success in one change, as the two changes would (a quick step)', async () => {
        const quick = (index: number, at: number, group: number | null = null): Change => ({
          ...(succeeded(runId(1), index, `"${index}"`, at) as Extract<Change, { type: 'step-succeeded' }>),
          started: { group },
        });
        await store.apply([quick(0, T0 + 20, 2)]);
        // Step 1 was started by an attempt that crashed; this attempt runs it again and it succeeds.
        await store.apply([started(runId(1), 1, T0 + 30)]);
        await store.apply([{ ...quick(1, T0 + 50), name: 'renamed' } as Change]);
        const steps = await store.listSteps(runId(1));
        expect(steps.map((s) => [s.index, s.name, s.status, s.output, s.reportedExecutions, s.group])).toEqual([
          [0, 's0', 'succeeded', '"0"', 1, 2],
          [1, 'renamed', 'succeeded', '"1"', 2, null],
        ]);
        expect(steps.map((s) => [s.startedAt, s.finishedAt, s.durationMs])).toEqual([
          [T0 + 15, T0 + 20, 5],
          [T0 + 45, T0 + 50, 5],
        ]);
        expect((await store.getRun(runId(1)))?.stepsDone).toBe(2);
      });

      it('counts re-executions of a step that has not succeeded', async () => {
        await store.apply([started(runId(1), 0, T0 + 10)]);
        await store.apply([{ ...started(runId(1), 0, T0 + 50), name: 'renamed' } as Change]);
        const [step] = await store.listSteps(runId(1));
        expect(step).toMatchObject({ status: 'running', reportedExecutions: 2, startedAt: T0 + 50, name: 'renamed' });
      });

      it('never touches a succeeded step again', async () => {
        await store.apply([started(runId(1), 0, T0 + 10), succeeded(runId(1), 0, '"ok"', T0 + 15)]);
        const before = await store.listSteps(runId(1));
        await store.apply([started(runId(1), 0, T0 + 50), failed(runId(1), 0, 'failed', T0 + 60)]);
        expect(await store.listSteps(runId(1))).toEqual(before);
        expect((await store.getRun(runId(1)))?.stepsDone).toBe(1);
      });

      it('counts failures while retrying, then fails', async () => {
        await store.apply([started(runId(1), 0, T0 + 10), failed(runId(1), 0, 'retrying', T0 + 17)]);
        let [step] = await store.listSteps(runId(1));
        expect(step).toMatchObject({ status: 'retrying', failures: 1, finishedAt: T0 + 17, durationMs: 7 });
        expect(step?.error).toEqual({ name: 'Error', message: `boom at ${T0 + 17}`, stack: 'Error: boom\n    at x' });

        await store.apply([started(runId(1), 0, T0 + 30)]);
        [step] = await store.listSteps(runId(1));
        expect(step).toMatchObject({
          status: 'running',
          reportedExecutions: 2,
          failures: 1,
          finishedAt: null,
          durationMs: null,
        });

        await store.apply([failed(runId(1), 0, 'failed', T0 + 40)]);
        [step] = await store.listSteps(runId(1));
        expect(step).toMatchObject({ status: 'failed', reportedExecutions: 2, failures: 2, finishedAt: T0 + 40 });
        expect(step?.error?.message).toBe(`boom at ${T0 + 40}`);
        expect((await store.getRun(runId(1)))?.stepsDone).toBe(0);
      });

      it('applies a streamed batch of many steps and runs exactly as the same changes one by one', async () => {
        const [r1, r2] = [runId(1), runId(2)];
        await store.createRun(newRun(2));
        await store.apply([
          started(r1, 0, T0 + 1),
          failed(r1, 0, 'retrying', T0 + 2),
          started(r2, 0, T0 + 3),
          started(r1, 4, T0 + 4),
          succeeded(r1, 4, '"kept"', T0 + 5),
        ]);
        await store.apply([
          started(r1, 0, T0 + 10),
          succeeded(r1, 0, '"a"', T0 + 11), // re-executed after a failure
          started(r1, 1, T0 + 12),
          succeeded(r1, 1, '"b"', T0 + 13), // new
          succeeded(r2, 0, '"c"', T0 + 14), // started in an earlier batch
          started(r1, 2, T0 + 15), // still running at the end of the batch
          started(r1, 3, T0 + 16),
          started(r1, 3, T0 + 17), // started twice
          started(r1, 4, T0 + 18),
          succeeded(r1, 4, '"again"', T0 + 19), // already succeeded: untouched
          started(r1, 5, T0 + 20),
          { type: 'steps-closed', runId: r1, status: 'cancelled', at: T0 + 21 }, // after the starts before it
        ]);
        const row = (s: Step) => [
          s.index,
          s.status,
          s.output,
          s.reportedExecutions,
          s.failures,
          s.startedAt,
          s.finishedAt,
        ];
        expect((await store.listSteps(r1)).map(row)).toEqual([
          [0, 'succeeded', '"a"', 2, 1, T0 + 10, T0 + 11],
          [1, 'succeeded', '"b"', 1, 0, T0 + 12, T0 + 13],
          [2, 'cancelled', null, 1, 0, T0 + 15, T0 + 21],
          [3, 'cancelled', null, 2, 0, T0 + 17, T0 + 21],
          [4, 'succeeded', '"kept"', 1, 0, T0 + 4, T0 + 5],
          [5, 'cancelled', null, 1, 0, T0 + 20, T0 + 21],
        ]);
        expect((await store.listSteps(r2)).map(row)).toEqual([[0, 'succeeded', '"c"', 1, 0, T0 + 3, T0 + 14]]);
        expect((await store.getRun(r1))?.stepsDone).toBe(3);
        expect((await store.getRun(r2))?.stepsDone).toBe(1);
      });

      it('records a sleep, a wait and a call with their details; the first record of a position wins', async () => {
        const request = {
          url: 'http://127.0.0.1:9/charge',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"a":1}',
          retries: 1,
        };
        const base = { type: 'step-suspended' as const, runId: runId(1), group: 2, at: T0 + 10 };
        await store.apply([
          { ...base, index: 0, name: 'nap', kind: 'sleep', until: T0 + 300, eventId: null, request: null },
          { ...base, index: 1, name: 'approval', kind: 'wait', until: T0 + 900, eventId: 'order-1', request: null },
          { ...base, index: 2, name: 'charge', kind: 'call', until: null, eventId: null, request },
        ]);
        // A later drive suspends at the same position again: the sleep keeps its first wake-up time.
        await store.apply([
          {
            ...base,
            index: 0,
            name: 'nap',
            kind: 'sleep',
            until: T0 + 99_999,
            eventId: null,
            request: null,
            at: T0 + 50,
          },
        ]);
        const steps = await store.listSteps(runId(1));
        expect(
          steps.map((s) => [s.index, s.kind, s.status, s.group, s.until, s.eventId, s.request, s.startedAt]),
        ).toEqual([
          [0, 'sleep', 'running', 2, T0 + 300, null, null, T0 + 10],
          [1, 'wait', 'running', 2, T0 + 900, 'order-1', null, T0 + 10],
          [2, 'call', 'running', 2, null, null, request, T0 + 10],
        ]);
      });

      it('closes the steps still running or retrying when the run ends, and leaves finished ones', async () => {
        await store.apply([
          started(runId(1), 0, T0 + 10),
          succeeded(runId(1), 0, '[1]', T0 + 15),
          started(runId(1), 1, T0 + 20),
          failed(runId(1), 1, 'retrying', T0 + 25),
          started(runId(1), 2, T0 + 20),
          started(runId(1), 3, T0 + 20),
          failed(runId(1), 3, 'failed', T0 + 26),
        ]);
        await store.apply([{ type: 'steps-closed', runId: runId(1), status: 'cancelled', at: T0 + 40 }]);
        const steps = await store.listSteps(runId(1));
        expect(steps.map((s) => [s.index, s.status, s.finishedAt])).toEqual([
          [0, 'succeeded', T0 + 15],
          [1, 'cancelled', T0 + 40],
          [2, 'cancelled', T0 + 40],
          [3, 'failed', T0 + 26],
        ]);
      });
    });

    describe('events', () => {
      const waitFor = (n: number, index: number, eventId: string): Change => ({
        type: 'step-suspended',
        runId: runId(n),
        index,
        name: `wait-${index}`,
        kind: 'wait',
        group: 1,
        until: T0 + 60_000,
        eventId,
        request: null,
        at: T0 + 5,
      });
      const notify = (eventId: string, now: number, keepUntil = now + 1000) =>
        store.deliverEvent({
          eventId,
          data: '{"ok":true}',
          output: '[{"eventData":1,"timeout":2},{"ok":3},true,false]',
          now,
          keepUntil,
        });

      it('resolves every wait for the event, wakes its run and keeps nothing', async () => {
        for (const n of [1, 2, 3]) await store.createRun(newRun(n));
        await store.apply([
          { type: 'run', runId: runId(1), patch: { status: 'waiting', nextAt: null }, at: T0 },
          { type: 'run', runId: runId(2), patch: { status: 'waiting', nextAt: T0 + 60_000 }, at: T0 },
          waitFor(1, 0, 'e1'),
          waitFor(2, 0, 'e1'),
          waitFor(3, 0, 'other'),
        ]);
        expect((await notify('e1', T0 + 100)).sort()).toEqual([runId(1), runId(2)]);
        for (const n of [1, 2]) {
          expect(await store.listSteps(runId(n))).toEqual([
            expect.objectContaining({
              status: 'succeeded',
              output: expect.any(String),
              finishedAt: T0 + 100,
              durationMs: 95,
            }),
          ]);
          expect(await store.getRun(runId(n))).toMatchObject({ nextAt: T0 + 100, stepsDone: 1 });
        }
        expect((await store.listSteps(runId(3)))[0]?.status).toBe('running');
        expect(await store.takeEvent('e1', T0 + 100)).toBeUndefined();
        // Delivered once: a second notify finds nobody waiting and is kept.
        expect(await notify('e1', T0 + 200)).toEqual([]);
        expect(await store.takeEvent('e1', T0 + 201)).toBe('{"ok":true}');
      });

      it('keeps an event nobody waits for until keepUntil, hands it out once, oldest first', async () => {
        await store.createRun(newRun(1));
        await store.deliverEvent({ eventId: 'e', data: '1', output: '', now: T0, keepUntil: T0 + 100 });
        await store.deliverEvent({ eventId: 'e', data: '2', output: '', now: T0 + 1, keepUntil: T0 + 1000 });
        expect(await store.takeEvent('other', T0 + 10)).toBeUndefined();
        // The first one expired at T0 + 100: the second is handed out, then none.
        expect(await store.takeEvent('e', T0 + 100)).toBe('2');
        expect(await store.takeEvent('e', T0 + 101)).toBeUndefined();
      });

      it('does not resolve the wait of a finished run', async () => {
        await store.createRun(newRun(1));
        await store.apply([
          waitFor(1, 0, 'e'),
          { type: 'run', runId: runId(1), patch: { status: 'cancelled' }, at: T0 + 10 },
        ]);
        expect(await notify('e', T0 + 20)).toEqual([]);
      });
    });

    describe('apply: attempts and run patches', () => {
      beforeEach(async () => {
        await store.createRun(newRun(1));
      });

      it('stores attempts and lists them in order, headers and errors intact', async () => {
        const transport = attempt(runId(1), 2, {
          responseStatus: null,
          responseHeaders: null,
          responseBody: null,
          outcome: 'error',
          error: { name: 'TypeError', message: 'fetch failed', code: 'ECONNREFUSED' },
        });
        await store.apply([
          { type: 'attempt', attempt: transport },
          { type: 'attempt', attempt: attempt(runId(1), 1) },
        ]);
        expect(await store.listAttempts(runId(1))).toEqual([attempt(runId(1), 1), transport]);
        expect(await store.listAttempts(runId(2))).toEqual([]);
      });

      it('sets only the fields in the patch, and tells null from absent', async () => {
        const error = { name: 'NonRetryableError', message: 'no', code: 'NON_RETRYABLE' };
        await store.apply([
          {
            type: 'run',
            runId: runId(1),
            at: T0 + 50,
            patch: { status: 'sleeping', nextAt: T0 + 5000, failures: 2, attempts: 4, output: '"x"', error },
          },
        ]);
        expect(await store.getRun(runId(1))).toMatchObject({
          status: 'sleeping',
          nextAt: T0 + 5000,
          failures: 2,
          attempts: 4,
          output: '"x"',
          error,
          updatedAt: T0 + 50,
          finishedAt: null,
        });

        await store.apply([{ type: 'run', runId: runId(1), patch: { status: 'running' }, at: T0 + 60 }]);
        expect(await store.getRun(runId(1))).toMatchObject({
          status: 'running',
          nextAt: T0 + 5000,
          output: '"x"',
          error,
          updatedAt: T0 + 60,
        });

        await store.apply([
          {
            type: 'run',
            runId: runId(1),
            patch: { nextAt: null, output: null, error: null, finishedAt: T0 + 70, status: 'completed' },
            at: T0 + 70,
          },
        ]);
        expect(await store.getRun(runId(1))).toMatchObject({
          status: 'completed',
          nextAt: null,
          output: null,
          error: null,
          finishedAt: T0 + 70,
          failures: 2,
          attempts: 4,
        });
      });

      it('never moves a finished run out of its status, but still records other fields', async () => {
        await store.apply([
          { type: 'run', runId: runId(1), patch: { status: 'cancelled', finishedAt: T0 + 10 }, at: T0 + 10 },
        ]);
        await store.apply([{ type: 'run', runId: runId(1), patch: { status: 'running', attempts: 3 }, at: T0 + 20 }]);
        expect(await store.getRun(runId(1))).toMatchObject({ status: 'cancelled', attempts: 3, finishedAt: T0 + 10 });
      });

      it("applies a commit of several runs' drives exactly as the same changes one by one", async () => {
        // What a group commit carries: quick steps, steps that meet rows earlier commits left, a
        // step twice, two patches of one run, attempts and releases, for two runs at once.
        const quick = (id: string, index: number, at: number): Change => ({
          ...(succeeded(id, index, `"${index}"`, at) as Extract<Change, { type: 'step-succeeded' }>),
          started: { group: null },
        });
        const earlier = (r: string, s: string): Change[] => [
          started(r, 1, T0 + 5),
          succeeded(s, 0, '"kept"', T0 + 6),
          started(s, 2, T0 + 7),
        ];
        const commit = (r: string, s: string): Change[] => [
          quick(r, 0, T0 + 20),
          quick(r, 1, T0 + 21), // its row was started by an earlier attempt
          succeeded(r, 2, '"plain"', T0 + 22),
          quick(s, 0, T0 + 23), // already succeeded: untouched, not counted
          succeeded(s, 2, '"two"', T0 + 24), // started in an earlier commit
          started(s, 3, T0 + 25),
          quick(s, 3, T0 + 26), // a step twice in one commit
          { type: 'attempt', attempt: attempt(r, 1, { requestHeaders: {} }) },
          { type: 'attempt', attempt: attempt(s, 1, { requestHeaders: {} }) },
          { type: 'run', runId: r, patch: { status: 'running', failures: 1, output: '"r"' }, at: T0 + 27 },
          { type: 'run', runId: s, patch: { status: 'sleeping', nextAt: T0 + 900 }, at: T0 + 28 },
          { type: 'run', runId: s, patch: { status: 'running', attempts: 2 }, at: T0 + 29 }, // a run patched twice
          { type: 'release', runId: r, owner: 'a' },
          { type: 'release', runId: s, owner: 'b' }, // not its holder: kept
          // Enough changes that PostgreSQL writes the set share with one statement per table.
          ...Array.from({ length: 20 }, (_, k) => quick(r, 10 + k, T0 + 30 + k)),
        ];
        for (let n = 2; n <= 4; n++) await store.createRun(newRun(n, { now: T0 + 1 }));
        expect(await store.claimDue({ now: T0 + 1, limit: 10, owner: 'a', leaseMs: 60_000 })).toHaveLength(4);
        const [together, oneByOne] = [
          [runId(1), runId(2)],
          [runId(3), runId(4)],
        ] as const;
        await store.apply(earlier(...together));
        await store.apply(commit(...together));
        for (const change of [...earlier(...oneByOne), ...commit(...oneByOne)]) await store.apply([change]);
        const state = async (id: string) => {
          const run = await store.getRun(id);
          return {
            run: { ...run, id: undefined },
            steps: (await store.listSteps(id)).map((step) => ({ ...step, runId: undefined })),
            attempts: (await store.listAttempts(id)).map((a) => ({ ...a, runId: undefined })),
          };
        };
        expect(await state(runId(1))).toEqual(await state(runId(3)));
        expect(await state(runId(2))).toEqual(await state(runId(4)));
        expect(await store.getRun(runId(1))).toMatchObject({ status: 'running', stepsDone: 23, failures: 1 });
        expect(await store.getRun(runId(2))).toMatchObject({ status: 'running', stepsDone: 3, attempts: 2 });
        // Released by its holder: claimable again; the other kept its lease.
        const claimed = await store.claimDue({ now: T0 + 1000, limit: 10, owner: 'c', leaseMs: 1000 });
        expect(claimed.map((run) => run.id).sort()).toEqual([runId(1), runId(3)]);
      });

      it('refuses a patch of a run that does not exist, and applies nothing of its batch, small or large', async () => {
        for (const steps of [0, 40]) {
          const batch: Change[] = [
            ...Array.from({ length: steps }, (_, k) => succeeded(runId(1), k, null, T0 + k)),
            { type: 'run', runId: runId(1), patch: { status: 'running' }, at: T0 + 10 },
            { type: 'run', runId: runId(9), patch: { status: 'running' }, at: T0 + 10 },
          ];
          await expect(store.apply(batch)).rejects.toThrow(`Expected run ${runId(9)} to exist for a run patch`);
          expect(await store.getRun(runId(1))).toMatchObject({ status: 'queued', stepsDone: 0 });
          expect(await store.listSteps(runId(1))).toEqual([]);
        }
      });

      it('applies nothing of a batch when one change fails', async () => {
        const batch: Change[] = [
          started(runId(1), 0, T0 + 10),
          { type: 'run', runId: runId(1), patch: { status: 'running' }, at: T0 + 10 },
          { type: 'attempt', attempt: attempt(runId(1), 1) },
          { type: 'attempt', attempt: attempt(runId(1), 1) },
        ];
        await expect(store.apply(batch)).rejects.toThrow();
        expect(await store.listSteps(runId(1))).toEqual([]);
        expect(await store.listAttempts(runId(1))).toEqual([]);
        expect((await store.getRun(runId(1)))?.status).toBe('queued');
      });
    });

    describe('leases', () => {
      const lease = { owner: 'a', leaseMs: 1000 };

      it('claims due runs oldest first, up to the limit, and not twice while leased', async () => {
        for (let n = 1; n <= 4; n++) await store.createRun(newRun(n));
        await store.apply([{ type: 'run', runId: runId(1), patch: { nextAt: T0 + 9000 }, at: T0 }]);
        const first = await store.claimDue({ ...lease, now: T0 + 100, limit: 2 });
        expect(first.map((r) => r.id)).toEqual([runId(2), runId(3)]);
        expect(first[0]).not.toHaveProperty('leaseOwner');
        const second = await store.claimDue({ ...lease, owner: 'b', now: T0 + 100, limit: 10 });
        expect(second.map((r) => r.id)).toEqual([runId(4)]);
        expect(await store.claimDue({ ...lease, owner: 'b', now: T0 + 100, limit: 10 })).toEqual([]);
        // Expired leases are free again; run 1 is due by then too.
        const later = await store.claimDue({ ...lease, owner: 'b', now: T0 + 9500, limit: 10 });
        expect(later.map((r) => r.id).sort()).toEqual([1, 2, 3, 4].map(runId));
      });

      it('never claims finished runs or runs with nothing scheduled', async () => {
        for (let n = 1; n <= 4; n++) await store.createRun(newRun(n));
        await store.apply([
          { type: 'run', runId: runId(1), patch: { status: 'completed' }, at: T0 },
          { type: 'run', runId: runId(2), patch: { status: 'failed' }, at: T0 },
          { type: 'run', runId: runId(3), patch: { status: 'cancelled' }, at: T0 },
          { type: 'run', runId: runId(4), patch: { status: 'waiting', nextAt: null }, at: T0 },
        ]);
        expect(await store.claimDue({ ...lease, now: T0 + 1e9, limit: 10 })).toEqual([]);
        expect(await store.nextDueAt()).toBeNull();
      });

      it('releases and renews only leases the owner holds', async () => {
        await store.createRun(newRun(1));
        await store.createRun(newRun(2));
        await store.claimDue({ ...lease, now: T0 + 10, limit: 10 });
        await store.release(runId(1), 'b');
        expect(await store.claimDue({ owner: 'b', leaseMs: 1000, now: T0 + 20, limit: 10 })).toEqual([]);
        await store.release(runId(1), 'a');
        expect((await store.claimDue({ owner: 'b', leaseMs: 1000, now: T0 + 20, limit: 10 })).map((r) => r.id)).toEqual(
          [runId(1)],
        );

        // a renews both, but holds only run 2 now: run 1 must stay b's lease (until T0 + 1020).
        await store.renew([runId(1), runId(2)], 'a', T0 + 50_000);
        const due = await store.claimDue({ owner: 'c', leaseMs: 1000, now: T0 + 20_000, limit: 10 });
        expect(due.map((r) => r.id)).toEqual([runId(1)]);
      });

      it('counts runs by status and the due, unclaimed queue', async () => {
        for (let n = 1; n <= 5; n++) await store.createRun(newRun(n));
        await store.apply([
          { type: 'run', runId: runId(1), patch: { status: 'completed' }, at: T0 },
          { type: 'run', runId: runId(2), patch: { status: 'waiting', nextAt: null }, at: T0 },
          { type: 'run', runId: runId(3), patch: { nextAt: T0 + 9000 }, at: T0 },
        ]);
        await claimRun(store, runId(4), { ...lease, now: T0 + 100 });
        const stats = await store.stats(T0 + 100);
        expect(stats.runs).toEqual({
          queued: 3,
          running: 0,
          sleeping: 0,
          waiting: 1,
          completed: 1,
          failed: 0,
          cancelled: 0,
        });
        // Due: 5 (4 is leased, 3 is not due yet, 2 waits with nothing scheduled, 1 is finished).
        expect(stats.due).toBe(1);
      });

      it('reports the earliest nextAt of unfinished runs', async () => {
        expect(await store.nextDueAt()).toBeNull();
        await store.createRun(newRun(5));
        await store.createRun(newRun(3));
        expect(await store.nextDueAt()).toBe(T0 + 3);
        await store.apply([{ type: 'run', runId: runId(3), patch: { status: 'completed', nextAt: null }, at: T0 }]);
        expect(await store.nextDueAt()).toBe(T0 + 5);
      });
    });
  });
}
