/**
 * Fair sharing: how many requests this runner has in flight to each destination origin, capped
 * per origin, so one slow or dead destination cannot take every slot of the loop that sends.
 * A send that finds its origin full is not queued here (it would hold its loop's slot while it
 * waits): its caller defers the work and tries again shortly (`SlotsFull`). Counts are this
 * process's: each runner sharing a database keeps its own.
 */

/** A held slot; `release` gives it back (a second call does nothing). */
export interface Slot {
  readonly origin: string;
  release(): void;
}

/** No slot now: why, in the words the dashboards show. */
export interface SlotsFull {
  readonly origin: string;
  readonly reason: string;
  /** The key did not wait here before: tell the dashboards once, not at every try. */
  readonly newlyWaiting: boolean;
}

interface OriginEntry {
  inFlight: number;
  limit: number;
  /** When `waiting` was last swept of keys that stopped trying (cancelled, taken by another runner). */
  sweptAt: number;
  /** Work deferred for want of a slot and not yet sent, by its key (run or message id), when deferred. */
  waiting: Map<string, number>;
}

/** How long a deferred key counts as waiting without trying again (it may have been cancelled). */
const WAITING_FORGET_MS = 60_000;

export interface OriginCount {
  origin: string;
  inFlight: number;
  waiting: number;
}

function reasonAt(origin: string, entry: OriginEntry): string {
  // The dashboards show it after "waiting: " (view/run-notes.ts), as flow control's reasons.
  return `for a slot at ${origin}: ${entry.inFlight} of ${entry.limit} requests in flight there`;
}

export class SlotTable {
  private readonly origins = new Map<string, OriginEntry>();
  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
  }

  /**
   * A slot at `origin` when fewer than `limit` are held there; else `SlotsFull`, and `key` (the
   * deferred run or message) counts as waiting there until it gets one.
   */
  acquire(origin: string, limit: number, key: string | undefined): Slot | SlotsFull {
    let entry = this.origins.get(origin);
    if (entry === undefined) {
      entry = { inFlight: 0, limit, sweptAt: this.now(), waiting: new Map() };
      this.origins.set(origin, entry);
    }
    entry.limit = limit;
    if (entry.inFlight >= limit) {
      this.sweep(entry);
      const newlyWaiting = key !== undefined && !entry.waiting.has(key);
      if (key !== undefined) entry.waiting.set(key, this.now());
      return { origin, reason: reasonAt(origin, entry), newlyWaiting };
    }
    if (key !== undefined && entry.waiting.size > 0) entry.waiting.delete(key);
    entry.inFlight += 1;
    let held = true;
    return {
      origin,
      release: () => {
        if (!held) return;
        held = false;
        entry.inFlight -= 1;
        if (entry.inFlight === 0) this.sweep(entry);
        if (entry.inFlight === 0 && entry.waiting.size === 0) this.origins.delete(origin);
      },
    };
  }

  /** Forgets the waiting keys that have not tried again for a while (at most once a second per origin). */
  private sweep(entry: OriginEntry): void {
    const now = this.now();
    if (now - entry.sweptAt < 1_000) return;
    entry.sweptAt = now;
    for (const [key, at] of entry.waiting) if (at < now - WAITING_FORGET_MS) entry.waiting.delete(key);
  }

  /** Why `key` waits now, when it waits for a slot. */
  waitingReason(key: string): string | undefined {
    for (const [origin, entry] of this.origins) {
      if (entry.waiting.has(key)) return reasonAt(origin, entry);
    }
    return undefined;
  }

  /** Every origin with something in flight or waiting (for /metrics). */
  counts(): OriginCount[] {
    const out: OriginCount[] = [];
    for (const [origin, entry] of this.origins) {
      this.sweep(entry);
      if (entry.inFlight === 0 && entry.waiting.size === 0) {
        this.origins.delete(origin);
        continue;
      }
      out.push({ origin, inFlight: entry.inFlight, waiting: entry.waiting.size });
    }
    return out;
  }
}

/** How soon a drive or failureFunction call that found its app origin's share taken is tried again. */
export const SLOT_RECHECK_MS = 250;

/** True when `acquire` gave no slot. */
export function isFull(result: Slot | SlotsFull): result is SlotsFull {
  return !('release' in result);
}
