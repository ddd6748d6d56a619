/**
 * Bytes a process may hold at once for one purpose (large request bodies being read, message
 * bodies being delivered), shared first come, first served. A taker larger than the whole budget
 * is charged the whole budget, so it waits until nothing else holds any and then goes alone:
 * memory stays bounded by the budget plus one such body, whatever the caps are set to.
 */
export class ByteBudget {
  readonly capacity: number;
  #held = 0;
  readonly #waiting: { bytes: number; grant: () => void }[] = [];

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get held(): number {
    return this.#held;
  }

  /** What is left before a taker waits (none while someone waits). */
  get available(): number {
    return this.#waiting.length > 0 ? 0 : Math.max(0, this.capacity - this.#held);
  }

  /**
   * Holds `bytes` at once, fitting or not: for a taker that already chose what fits (`available`)
   * and holds what it claimed, such as the delivery worker's claim.
   */
  hold(bytes: number): () => void {
    const cost = this.cost(bytes);
    this.#held += cost;
    return this.#releaser(cost);
  }

  /** What `bytes` costs here: never more than the whole budget. */
  cost(bytes: number): number {
    return Math.min(Math.max(0, bytes), this.capacity);
  }

  /** Holds `bytes` now if they fit and nobody waits before; else undefined. */
  tryTake(bytes: number): (() => void) | undefined {
    const cost = this.cost(bytes);
    if (this.#waiting.length > 0 || this.#held + cost > this.capacity) return undefined;
    this.#held += cost;
    return this.#releaser(cost);
  }

  /** Holds `bytes` once they fit, after those waiting before; resolves to the release. */
  take(bytes: number): Promise<() => void> {
    const now = this.tryTake(bytes);
    if (now) return Promise.resolve(now);
    const cost = this.cost(bytes);
    return new Promise((resolve) => {
      this.#waiting.push({
        bytes: cost,
        grant: () => {
          this.#held += cost;
          resolve(this.#releaser(cost));
        },
      });
    });
  }

  #releaser(cost: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#held -= cost;
      this.#grantWaiting();
    };
  }

  #grantWaiting(): void {
    for (;;) {
      const next = this.#waiting[0];
      if (!next || this.#held + next.bytes > this.capacity) return;
      this.#waiting.shift();
      next.grant();
    }
  }
}
