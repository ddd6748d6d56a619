import { appliedAttempts, appliedBy } from '../store/applied.js';
import type { Applied, Change, Store } from '../store/types.js';

/** Commits changes (group-committed) and tells listeners; fenced by `owner`'s leases when given. */
export type Commit = (changes: Change[], owner?: string) => Promise<void>;

interface Pending {
  changes: readonly Change[];
  /** The runner whose lease fences these changes; undefined for API actions (cancel). */
  owner: string | undefined;
  resolve: (applied: Applied) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: changes pushed during one turn of the event loop, from any number of runs, go
 * to the store as one transaction (one fsync). Order is kept; `push` resolves once durable.
 *
 * Pushes with an `owner` (a drive's commits) are fenced by that owner's leases; a batch is cut
 * into consecutive runs of pushes with the same owner, so order is kept across owners too (in
 * practice a batch is the runner's own commits, with now and then an unfenced cancel between them).
 */
export class CommitQueue {
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private readonly store: Store;
  private readonly returning: () => boolean;

  constructor(store: Store, returning: () => boolean = () => false) {
    this.store = store;
    this.returning = returning;
  }

  push(changes: readonly Change[], owner?: string): Promise<Applied> {
    if (changes.length === 0) return (this.flushing ?? Promise.resolve()).then(() => appliedAttempts(changes));
    return new Promise<Applied>((resolve, reject) => {
      this.pending.push({ changes, owner, resolve, reject });
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
      for (const group of byOwner(batch)) await this.commit(group);
    }
    this.flushing = undefined;
  }

  private async commit(group: Pending[]): Promise<void> {
    const owner = group[0]?.owner;
    const returning = this.returning();
    const options = { ...(owner !== undefined && { owner }), ...(returning && { returning }) };
    const share = (applied: Applied, changes: readonly Change[]): Applied =>
      returning ? appliedBy(applied, changes) : appliedAttempts(changes);
    try {
      const applied = await this.store.apply(
        group.flatMap((p) => p.changes),
        options,
      );
      for (const p of group) p.resolve(share(applied, p.changes));
    } catch (error) {
      if (group.length === 1) group[0]!.reject(error);
      // One bad change (or one run whose lease was lost) must not fail the other runs' changes
      // that shared its transaction.
      else
        for (const p of group)
          await this.store.apply(p.changes, options).then((applied) => p.resolve(share(applied, p.changes)), p.reject);
    }
  }
}

/** Consecutive pushes with the same owner, in order. */
function byOwner(batch: Pending[]): Pending[][] {
  const groups: Pending[][] = [];
  for (const p of batch) {
    const last = groups.at(-1);
    if (last && last[0]!.owner === p.owner) last.push(p);
    else groups.push([p]);
  }
  return groups;
}
