const brand = Symbol.for('wf.lease-lost');

/**
 * A fenced `apply` (one with `owner`) touched a run whose lease that owner no longer holds: another
 * runner took the run over (this one stalled or died past its lease), or the lease was released.
 * Nothing of that `apply` was committed, so a stale runner can never commit a step result over the
 * new holder's. The runner stops driving the run when it sees this.
 */
export class LeaseLostError extends Error {
  override name = 'LeaseLostError';
  readonly code = 'LEASE_LOST';
  readonly runId: string;
  /** Who tried to commit. */
  readonly owner: string;
  /** Who holds the lease now (null: nobody, e.g. released after the run was finished elsewhere). */
  readonly holder: string | null;

  constructor(runId: string, owner: string, holder: string | null) {
    const who = holder === null ? 'no runner holds it now' : `${holder} holds it now`;
    super(
      `Expected ${owner} to hold the lease on run ${runId} to commit changes to it, but ${who}: another runner took the run over, so nothing of this commit was applied.`,
    );
    this.runId = runId;
    this.owner = owner;
    this.holder = holder;
  }

  get [brand](): true {
    return true;
  }

  /** Works across copies of the package (a brand, not `instanceof`). */
  static is(value: unknown): value is LeaseLostError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  }
}
