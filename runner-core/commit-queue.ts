import type { Change, Store } from './store/types.js';

interface Pending {
  changes: readonly Change[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: changes pushed during one turn of the event loop, from any number of runs, go
 * to the store as one transaction (one fsync). Order is kept; `push` resolves once durable.
 */
export class CommitQueue {
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private readonly store: Store;

  constructor(store: Store) {
    this.store = store;
  }

  push(changes: readonly Change[]): Promise<void> {
    if (changes.length === 0) return this.flushing ?? Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ changes, resolve, reject });
      if (!this.flushing) this.flushing = this.flushSoon();
    });
  }

  /** Resolves when everything pushed so far is durable. */
  async drain(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flushSoon(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        await this.store.apply(batch.flatMap((p) => p.changes));
        for (const p of batch) p.resolve();
      } catch (error) {
        if (batch.length === 1) batch[0]!.reject(error);
        // One bad change must not fail the other runs' changes that shared its transaction.
        else for (const p of batch) await this.store.apply(p.changes).then(p.resolve, p.reject);
      }
    }
    this.flushing = undefined;
  }
}
