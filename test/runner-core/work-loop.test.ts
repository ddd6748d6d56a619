import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Logger } from '../../runner-core/telemetry/logger.js';
import { renewEvery, WorkLoop, type WorkLoopOptions } from '../../runner-core/background/work-loop.js';

/** A job of the fake store: `finish` ends its work with "released itself?" (or throws `error`). */
interface Job {
  id: string;
}

/** A work item the test holds open until it says how it ends. */
interface Held {
  signal: AbortSignal;
  finish: (released: boolean) => void;
  fail: (error: Error) => void;
}

/**
 * A fake leasing store behind a WorkLoop: `due` is what the next claims hand out, every call is
 * recorded, and each job's work waits until the test ends it (`held`).
 */
function harness(options: Partial<WorkLoopOptions<Job>> = {}) {
  const due: Job[] = [];
  const claims: number[] = [];
  const renewals: { at: number; keys: string[] }[] = [];
  const released: string[] = [];
  const failures: string[] = [];
  const errors: string[] = [];
  const held = new Map<string, Held>();
  const ended: string[] = [];
  let claiming = 0;
  let mostClaimsAtOnce = 0;
  let nextDue: number | null = null;
  const logger: Logger = { info: () => {}, warn: () => {}, error: (message) => errors.push(message) };
  const loop = new WorkLoop<Job>({
    name: 'test loop',
    logger,
    now: Date.now,
    concurrency: 2,
    leaseMs: 900,
    pollMs: 60_000,
    async claim(limit) {
      claiming++;
      mostClaimsAtOnce = Math.max(mostClaimsAtOnce, claiming);
      claims.push(limit);
      await new Promise((resolve) => setImmediate(resolve));
      claiming--;
      return due.splice(0, limit);
    },
    key: (job) => job.id,
    work: (job, signal) =>
      new Promise<boolean>((resolve, reject) => {
        held.set(job.id, { signal, finish: resolve, fail: reject });
        // Work that winds down a little after an abort: a stop must wait for it.
        signal.addEventListener('abort', () => setTimeout(() => resolve(false), 20));
      }).finally(() => ended.push(job.id)),
    failed: (job) => failures.push(job.id),
    renew: async (keys) => void renewals.push({ at: Date.now(), keys }),
    release: async (key) => void released.push(key),
    nextDueAt: async () => nextDue,
    ...options,
  });
  const setNextDue = (at: number | null): void => {
    nextDue = at;
  };
  return {
    loop,
    due,
    claims,
    renewals,
    released,
    failures,
    errors,
    held,
    ended,
    setNextDue,
    mostClaimsAtOnce: () => mostClaimsAtOnce,
  };
}

/** A started loop (stopped after the test) working on the jobs `ids`, all of them held. */
async function started(...ids: string[]): Promise<ReturnType<typeof harness>> {
  const t = harness();
  running = t.loop;
  t.due.push(...ids.map((id) => ({ id })));
  t.loop.start();
  await vi.waitFor(() => expect(t.held.size).toBe(ids.length));
  return t;
}

let running: WorkLoop<Job> | undefined;
afterEach(async () => {
  await running?.stop(0);
  running = undefined;
});

describe('WorkLoop', () => {
  it('claims no more than its free slots, and an item that ends makes room for the next', async () => {
    const t = harness();
    running = t.loop;
    t.due.push({ id: 'a' }, { id: 'b' }, { id: 'c' });
    t.loop.start();
    await vi.waitFor(() => expect([...t.held.keys()]).toEqual(['a', 'b']));
    expect(t.claims[0]).toBe(2);
    expect(t.loop.room).toBe(0);
    t.held.get('a')!.finish(true);
    await vi.waitFor(() => expect(t.held.has('c')).toBe(true));
    expect(t.loop.size).toBe(2);
  });

  it('after a poll that left room, an item that ends only reads the next due time, and claims when something is due', async () => {
    let reads = 0;
    let nextDue: number | null = null;
    const t = harness({
      nextDueAt: async () => {
        reads++;
        return nextDue;
      },
    });
    running = t.loop;
    t.due.push({ id: 'a' });
    t.loop.start();
    await vi.waitFor(() => expect(reads).toBe(1));
    expect(t.claims).toEqual([2]);
    // Due only in a minute: the end of `a` reads that and claims nothing.
    t.due.push({ id: 'later' });
    nextDue = Date.now() + 60_000;
    t.held.get('a')!.finish(true);
    await vi.waitFor(() => expect(reads).toBe(2));
    await new Promise((resolve) => setImmediate(resolve));
    expect(t.claims).toEqual([2]);
    // Due now: the next end claims it.
    t.loop.launch({ id: 'b' });
    nextDue = Date.now() - 1;
    t.held.get('b')!.finish(true);
    await vi.waitFor(() => expect(t.held.has('later')).toBe(true));
    nextDue = null;
    expect(t.claims.slice(0, 2)).toEqual([2, 2]);
  });

  it('counts a reserved slot as taken: no claim and no other reservation takes it until it is given back', async () => {
    let polls = 0;
    // Told once a poll's claim is over (it asks for the next due time after claiming).
    const t = harness({
      nextDueAt: async () => {
        polls++;
        return null;
      },
    });
    running = t.loop;
    t.loop.start();
    await vi.waitFor(() => expect(polls).toBe(1));
    expect(t.loop.reserve()).toBe(true);
    expect(t.loop.reserve()).toBe(true);
    expect(t.loop.reserve()).toBe(false);
    expect(t.loop.room).toBe(0);
    t.due.push({ id: 'a' });
    t.loop.wake();
    // The wake finds no free slot, so it claims nothing; the reserved item is launched instead.
    t.loop.unreserve();
    t.loop.launch({ id: 'reserved' });
    await vi.waitFor(() => expect(t.held.has('reserved')).toBe(true));
    expect(t.held.has('a')).toBe(false);
    t.loop.unreserve();
    t.loop.wake();
    await vi.waitFor(() => expect(t.held.has('a')).toBe(true));
    expect(t.claims.at(-1)).toBe(1);
  });

  it('wakes on new work, one claim at a time however many wakes arrive', async () => {
    const t = harness();
    running = t.loop;
    t.loop.start();
    await vi.waitFor(() => expect(t.claims.length).toBeGreaterThan(0));
    t.due.push({ id: 'a' });
    for (let i = 0; i < 50; i++) t.loop.wake();
    await vi.waitFor(() => expect(t.held.has('a')).toBe(true));
    expect(t.mostClaimsAtOnce()).toBe(1);
    // A burst of wakes during one claim makes one more claim, not fifty.
    expect(t.claims.length).toBeLessThanOrEqual(3);
  });

  it('polls again at the next due time without a wake, long before pollMs', async () => {
    const t = harness();
    running = t.loop;
    t.setNextDue(Date.now() + 100);
    t.loop.start();
    await vi.waitFor(() => expect(t.claims.length).toBe(1));
    t.due.push({ id: 'later' });
    await vi.waitFor(() => expect(t.held.has('later')).toBe(true), { timeout: 10_000 });
  });

  it('renews the leases of the items in flight every lease/3, and only theirs', async () => {
    const t = await started('a', 'b');
    t.held.get('b')!.finish(true);
    await vi.waitFor(() => expect(t.loop.size).toBe(1));
    const from = t.renewals.length;
    await vi.waitFor(() => expect(t.renewals.length).toBeGreaterThanOrEqual(from + 2), { timeout: 10_000 });
    const later = t.renewals.slice(from);
    for (const renewal of later) expect(renewal.keys).toEqual(['a']);
    // Renewals keep to the interval, not to every tick as fast as it can: consecutive ones are about
    // renewEvery apart. A renewal is stamped when its callback runs, which a busy machine delays, so
    // a late stamp followed by one on time reads a little short: 25 ms of slack, not a millisecond.
    expect(later[1]!.at - later[0]!.at).toBeGreaterThanOrEqual(renewEvery(900) - 25);
  });

  it('releases an item whose work did not (false or a throw), not one that did', async () => {
    const t = await started('kept', 'threw');
    t.held.get('kept')!.finish(false);
    t.held.get('threw')!.fail(new Error('boom'));
    await vi.waitFor(() => expect(t.loop.size).toBe(0));
    expect(t.released.sort()).toEqual(['kept', 'threw']);
    expect(t.failures).toEqual(['threw']);
    t.due.push({ id: 'self' });
    t.loop.wake();
    await vi.waitFor(() => expect(t.held.has('self')).toBe(true));
    t.held.get('self')!.finish(true);
    await vi.waitFor(() => expect(t.loop.size).toBe(0));
    expect(t.released).not.toContain('self');
  });

  it('a lost item is aborted once, reported lost while it winds down, and never released', async () => {
    const t = await started('a');
    expect(t.loop.lose('a')).toBe(true);
    expect(t.loop.lose('a')).toBe(false);
    expect(t.loop.lose('not-here')).toBe(false);
    expect(t.held.get('a')!.signal.aborted).toBe(true);
    expect(t.loop.isLost('a')).toBe(true);
    t.held.get('a')!.finish(false);
    await vi.waitFor(() => expect(t.loop.size).toBe(0));
    expect(t.loop.isLost('a')).toBe(false);
    expect(t.released).toEqual([]);
  });

  it('stop lets work end within the grace, aborts what is left, and resolves only once all of it ended', async () => {
    const t = harness();
    t.due.push({ id: 'quick' }, { id: 'slow' });
    t.loop.start();
    await vi.waitFor(() => expect(t.held.size).toBe(2));
    const quick = t.held.get('quick')!;
    const slow = t.held.get('slow')!;
    const stopped = t.loop.stop(300);
    quick.finish(true);
    await stopped;
    expect(quick.signal.aborted).toBe(false);
    expect(slow.signal.aborted).toBe(true);
    expect(t.ended.sort()).toEqual(['quick', 'slow']);
    expect(t.loop.size).toBe(0);
    expect(t.released).toEqual(['slow']);
    const claimsAtStop = t.claims.length;
    t.loop.wake();
    await new Promise((resolve) => setImmediate(resolve));
    expect(t.claims.length).toBe(claimsAtStop);
  });

  it('a stop waits for the claim in flight and gives back what it returned, without working on it', async () => {
    let answer: ((jobs: Job[]) => void) | undefined;
    const t = harness({ claim: () => new Promise<Job[]>((resolve) => (answer = resolve)) });
    t.loop.start();
    await vi.waitFor(() => expect(answer).toBeDefined());
    const stopping = t.loop.stop(0);
    answer!([{ id: 'late' }]);
    // The stop waits for the claim in flight, so nothing it took is still leased once the stop resolved.
    await stopping;
    expect(t.released).toEqual(['late']);
    expect(t.held.has('late')).toBe(false);
  });

  it('a failing claim is logged and tried again; a failing renewal is logged', async () => {
    let calls = 0;
    const t = harness({
      pollMs: 20,
      claim: async () => {
        calls++;
        if (calls === 1) throw new Error('database down');
        return calls === 2 ? [{ id: 'a' }] : [];
      },
      renew: () => Promise.reject(new Error('renew down')),
    });
    running = t.loop;
    t.loop.start();
    await vi.waitFor(() => expect(t.held.has('a')).toBe(true));
    expect(t.errors[0]).toMatch(/^test loop poll failed: Error: database down/);
    await vi.waitFor(
      () => expect(t.errors.some((e) => e.startsWith('test loop lease renewal failed: Error: renew down'))).toBe(true),
      { timeout: 10_000 },
    );
  });
});
