import { coalesce } from '../../api/coalesce.js';
import { describeError, type Logger } from '../telemetry/logger.js';

/**
 * The one leased background loop of the runner: claims due work with a lease, works on each item,
 * keeps the leases of the items in flight, and drains on stop. The scheduler (native drives), the
 * QStash delivery worker (messages) and the Upstash wait timeouts each give it their own store
 * calls; how a lease is held (renewal, loss, release, wake, poll, drain) is decided only here.
 */
export interface WorkLoopOptions<Item> {
  /** What the loop's log lines call it (`scheduler`, `QStash delivery`). */
  name: string;
  logger: Logger;
  now: () => number;
  /** Items in flight at most. */
  concurrency: number;
  /** The lease a claim takes; held items are renewed every lease/3 (`renewEvery`). */
  leaseMs: number;
  /** Longest sleep between two polls. */
  pollMs: number;
  /** Leases up to `limit` due items to this runner. */
  claim(limit: number): Promise<Item[]>;
  /** The item's identity: one item in flight per key, and what `renew`/`release`/`lose` name. */
  key(item: Item): string;
  /** Works on one item; resolves true when it released (or gave up) the item's lease itself, false to have the loop release it. */
  work(item: Item, signal: AbortSignal): Promise<boolean>;
  /** Reports an item whose work threw (the loop then releases its lease, as for a false). */
  failed(item: Item, error: unknown): void;
  /** Extends the leases of these items (in flight here) to now + lease. Without it, leases are not renewed. */
  renew?(keys: string[]): Promise<void>;
  /** Gives back the lease of an item whose work did not; without it, the lease ends by itself. Logs its own failure. */
  release?(key: string): Promise<void>;
  /** When the next item falls due (null: nothing is waiting), so the loop sleeps no longer than that. */
  nextDueAt?(): Promise<number | null>;
}

/** How often leases of `leaseMs` are renewed: three times per lease, at most every 250 ms. */
export function renewEvery(leaseMs: number): number {
  return Math.max(250, Math.floor(leaseMs / 3));
}

interface InFlight {
  readonly controller: AbortController;
  /** Another runner holds its lease now: its work stops and nothing is released. */
  lost: boolean;
  /** Settles once the item's work (and its release) ended and it left the loop. */
  ended: Promise<void>;
}

/**
 * @example
 * const loop = new WorkLoop({ name: 'jobs', claim: (n) => store.claim(n), key: (job) => job.id, work: runJob, … });
 * loop.start(); loop.wake(); await loop.stop(2_000);
 */
export class WorkLoop<Item> {
  readonly #o: WorkLoopOptions<Item>;
  readonly #inFlight = new Map<string, InFlight>();
  #reserved = 0;
  #pollTimer: NodeJS.Timeout | undefined;
  /** When `#pollTimer` fires (epoch ms, `now`'s clock). */
  #pollAt = 0;
  /**
   * Whether the last poll may have left due items behind: it found no room, or filled all it had.
   * Only then can an item's end find something to claim at once; otherwise its end only moves the
   * next due time (see `#ended`).
   */
  #lastPollFull = true;
  #renewTimer: NodeJS.Timeout | undefined;
  #stopped = true;
  /** The poll running now (or the last one): a stop waits for it, so no claim outlives the stop. */
  #polling: Promise<void> = Promise.resolve();
  /** One poll at a time; a wake while one runs makes exactly one more after it. */
  readonly #pollSoon = coalesce(() => (this.#stopped ? Promise.resolve() : (this.#polling = this.#poll())), 0);
  /** One read of the next due time at a time, as for polls. */
  readonly #recheckSoon = coalesce(() => (this.#stopped ? Promise.resolve() : this.#recheck()), 0);

  constructor(options: WorkLoopOptions<Item>) {
    this.#o = options;
  }

  /** True before `start` and from `stop` on: no more claims, launches or renewals. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Items in flight now. */
  get size(): number {
    return this.#inFlight.size;
  }

  /** How many more items fit now: slots neither in flight nor reserved. */
  get room(): number {
    return this.#stopped ? 0 : Math.max(0, this.#o.concurrency - this.#inFlight.size - this.#reserved);
  }

  /**
   * Holds a slot for an item launched a little later (a start whose run is still being committed),
   * so neither a claim nor another start takes it meanwhile; false when none is free. Each true is
   * matched by one `unreserve`, just before that item's `launch` or instead of it.
   */
  reserve(): boolean {
    if (this.room === 0) return false;
    this.#reserved++;
    return true;
  }

  unreserve(): void {
    this.#reserved = Math.max(0, this.#reserved - 1);
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    if (this.#o.renew) {
      this.#renewTimer = setInterval(() => void this.#renew(), renewEvery(this.#o.leaseMs));
      this.#renewTimer.unref();
    }
    this.wake();
  }

  /** Stops claiming, gives the items in flight `graceMs` to finish, then aborts them and waits for them to end. */
  async stop(graceMs: number): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#pollTimer);
    clearInterval(this.#renewTimer);
    await this.#polling;
    const deadline = Date.now() + graceMs;
    while (this.#inFlight.size > 0 && Date.now() < deadline) await this.#someEnded(deadline - Date.now());
    for (const item of this.#inFlight.values()) item.controller.abort();
    while (this.#inFlight.size > 0) await this.#someEnded(Infinity);
  }

  /** Looks for due work now (coalesced), then sleeps until the next due time or `pollMs`. */
  wake(): void {
    if (!this.#stopped) this.#pollSoon();
  }

  /** Works on an item this runner holds the lease of (claimed, or just created); ignored if it is in flight already. */
  launch(item: Item): void {
    const key = this.#o.key(item);
    if (this.#inFlight.has(key)) return;
    const entry: InFlight = { controller: new AbortController(), lost: false, ended: Promise.resolve() };
    this.#inFlight.set(key, entry);
    entry.ended = this.#work(item, key, entry);
  }

  /** Aborts the work on `key`, if it is in flight here. */
  abort(key: string): void {
    this.#inFlight.get(key)?.controller.abort();
  }

  /**
   * Another runner holds `key`'s lease now: its work is aborted and its lease not released. False
   * when it is not in flight here or was already lost (so the caller reports the loss once).
   */
  lose(key: string): boolean {
    const entry = this.#inFlight.get(key);
    if (!entry || entry.lost) return false;
    entry.lost = true;
    entry.controller.abort();
    return true;
  }

  isLost(key: string): boolean {
    return this.#inFlight.get(key)?.lost === true;
  }

  async #work(item: Item, key: string, entry: InFlight): Promise<void> {
    let released = false;
    try {
      released = (await this.#o.work(item, entry.controller.signal)) === true;
    } catch (error) {
      this.#o.failed(item, error);
    }
    // Not released: given back now, so it is not held until its lease ends (a lost one is not ours to give).
    if (!released && !entry.lost && this.#o.release) await this.#o.release(key).catch(() => {});
    this.#inFlight.delete(key);
    this.#ended();
  }

  /**
   * An item ended, so a slot is free. After a poll that found less than its room, nothing was left
   * due then: a claim now would find only what became due since, and the next due time says
   * whether anything did (the ended item's own included, a retry or a sleep). So only that is read
   * (one query instead of a claim and then it), and a poll follows when something is due now. With
   * several runners on one database, each polling as its drives end, this is most of their polls.
   */
  #ended(): void {
    if (this.#stopped) return;
    if (this.#lastPollFull || !this.#o.nextDueAt) this.wake();
    else this.#recheckSoon();
  }

  async #recheck(): Promise<void> {
    const { nextDueAt, now, pollMs } = this.#o;
    try {
      const next = nextDueAt ? await nextDueAt() : null;
      if (this.#stopped) return;
      if (next !== null && next <= now()) this.wake();
      else this.#sleep(next === null ? pollMs : Math.min(pollMs, next - now()), false);
    } catch {
      this.wake();
    }
  }

  /** Polls again in `delay` ms; `replace` false keeps a sooner poll already set. */
  #sleep(delay: number, replace: boolean): void {
    if (this.#stopped) return;
    const at = this.#o.now() + delay;
    if (!replace && this.#pollTimer !== undefined && this.#pollAt <= at) return;
    clearTimeout(this.#pollTimer);
    this.#pollAt = at;
    this.#pollTimer = setTimeout(() => this.wake(), delay);
  }

  async #poll(): Promise<void> {
    const { claim, nextDueAt, now, pollMs, logger, name } = this.#o;
    clearTimeout(this.#pollTimer);
    try {
      const free = this.room;
      const claimed = free > 0 ? await claim(free) : [];
      this.#lastPollFull = free === 0 || claimed.length >= free;
      for (const item of claimed) {
        // Claimed while a stop began: given back, not worked on after the drain.
        if (this.#stopped) await this.#o.release?.(this.#o.key(item)).catch(() => {});
        else this.launch(item);
      }
      // At capacity, an item that ends wakes the loop; otherwise it sleeps until the next due time.
      const next = free > 0 && nextDueAt ? await nextDueAt() : null;
      this.#sleep(next === null ? pollMs : Math.min(pollMs, Math.max(0, next - now())), true);
    } catch (error) {
      this.#lastPollFull = true;
      logger.error(`${name} poll failed: ${describeError(error)}`);
      this.#sleep(pollMs, true);
    }
  }

  async #renew(): Promise<void> {
    const { renew, logger, name } = this.#o;
    if (!renew || this.#inFlight.size === 0) return;
    const keys = [...this.#inFlight.keys()];
    await renew(keys).catch((error: unknown) => {
      logger.error(`${name} lease renewal failed: ${describeError(error)}`, { inFlight: keys.length });
    });
  }

  /** Resolves when some item in flight ends, or after `ms`. */
  async #someEnded(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout =
      ms === Infinity ? [] : [new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))];
    await Promise.race([...[...this.#inFlight.values()].map((entry) => entry.ended), ...timeout]);
    clearTimeout(timer);
  }
}
