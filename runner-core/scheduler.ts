import { coalesce } from '../api/coalesce.js';
import { drainInFlight, renewEvery } from './in-flight.js';
import type { Logger } from './logger.js';
import { describeError } from './logger.js';
import { LeaseLostError } from './store/errors.js';
import type { Run, Store } from './store/types.js';

/** Drives one claimed run; resolves true when its lease was released (or lost) on the way. */
export type DriveFn = (run: Run, isNew: boolean, signal: AbortSignal) => Promise<boolean>;

export interface SchedulerOptions {
  store: Store;
  owner: string;
  now: () => number;
  concurrency: number;
  leaseMs: number;
  pollMs: number;
  logger: Logger;
  drive: DriveFn;
  /** Runs a claim left waiting for a flow control slot (see `ClaimOptions.onWaiting`). */
  onWaiting?: (runIds: string[]) => void;
}

/**
 * Which runs this runner drives and for how long: claims due work (leased to `owner`), renews the
 * leases of runs in flight every lease/3, wakes on new work or at the next due time (`pollMs` at
 * most), and gives a drive's lease back when the drive did not.
 */
export class Scheduler {
  /** Runs in flight, each with the controller that aborts its drive. */
  readonly inflight = new Map<string, AbortController>();
  /** In-flight runs whose lease another runner took: their drives stop without committing more. */
  private readonly lost = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  /** One poll at a time; a wake while one runs makes exactly one more after it. */
  private readonly pollSoon = coalesce(() => (this.stopped ? Promise.resolve() : this.poll()), 0);
  stopped = true;

  private readonly options: SchedulerOptions;

  constructor(options: SchedulerOptions) {
    this.options = options;
  }

  /** Room for one more drive now (a start drives at once only then). */
  get hasRoom(): boolean {
    return !this.stopped && this.inflight.size < this.options.concurrency;
  }

  start(): void {
    this.stopped = false;
    this.renewTimer = setInterval(() => void this.renewLeases(), renewEvery(this.options.leaseMs));
    this.renewTimer.unref();
    this.wake();
  }

  /** Stops scheduling, gives in-flight drives `graceMs` to finish, then aborts them and waits. */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.renewTimer);
    await drainInFlight(this.inflight, graceMs, () => {
      for (const controller of this.inflight.values()) controller.abort();
    });
  }

  /** Aborts a run's drive, if one is in flight here (a cancel). */
  abort(runId: string): void {
    this.inflight.get(runId)?.abort();
  }

  isLost(runId: string): boolean {
    return this.lost.has(runId);
  }

  /**
   * The store said another runner holds this run now: its drive is aborted and not retried here,
   * and logged once. False when the run is not in flight here or was already marked lost.
   */
  lose(error: LeaseLostError): boolean {
    const controller = this.inflight.get(error.runId);
    if (!controller || this.lost.has(error.runId)) return false;
    this.lost.add(error.runId);
    const holder = error.holder === null ? 'no runner holds it now' : `${error.holder} holds it now`;
    this.options.logger.error(`lost the lease on run ${error.runId} (${holder}: this runner stalled past its lease); stopped driving it here, nothing more of this drive is committed.`, { runId: error.runId, holder: error.holder });
    controller.abort();
    return true;
  }

  launch(run: Run, isNew: boolean): void {
    const { store, owner, logger } = this.options;
    const controller = new AbortController();
    this.inflight.set(run.id, controller);
    void this.options
      .drive(run, isNew, controller.signal)
      .catch((error: unknown) => {
        // A lost lease was logged once, when the store first said so; there is nothing to release.
        if (LeaseLostError.is(error)) return true;
        logger.error(`driving ${run.id} failed: ${describeError(error)}`, { runId: run.id });
        return false;
      })
      .then(async (released) => {
        this.inflight.delete(run.id);
        const lost = this.lost.delete(run.id);
        if (!released && !lost) {
          // Not fatal: the lease ends by itself after leaseMs and the run is claimed again then.
          await store.release(run.id, owner).catch((error: unknown) => {
            logger.error(`could not release the lease on run ${run.id}; it is driven again once the lease expires: ${describeError(error)}`, { runId: run.id });
          });
        }
        this.wake();
      });
  }

  /** Looks for due work now (coalesced), then sleeps until the next due time or `pollMs`. */
  wake(): void {
    if (!this.stopped) this.pollSoon();
  }

  private async poll(): Promise<void> {
    const { store, owner, now, concurrency, leaseMs, pollMs, logger } = this.options;
    clearTimeout(this.timer);
    try {
      const free = concurrency - this.inflight.size;
      if (free > 0) {
        const runs = await store.claimDue({ now: now(), limit: free, owner, leaseMs, onWaiting: this.options.onWaiting });
        for (const run of runs) if (!this.inflight.has(run.id)) this.launch(run, false);
      }
      // At capacity, a finishing drive wakes us; otherwise sleep until the next due time.
      const next = free > 0 ? await store.nextDueAt() : null;
      const delay = next === null ? pollMs : Math.min(pollMs, Math.max(0, next - now()));
      if (!this.stopped) this.timer = setTimeout(() => this.wake(), delay);
    } catch (error) {
      logger.error(`scheduler poll failed: ${describeError(error)}`);
      if (!this.stopped) this.timer = setTimeout(() => this.wake(), pollMs);
    }
  }

  private async renewLeases(): Promise<void> {
    const { store, owner, now, leaseMs, logger } = this.options;
    if (this.inflight.size === 0) return;
    await store.renew([...this.inflight.keys()], owner, now() + leaseMs).catch((error: unknown) => {
      logger.error(`lease renewal failed: ${describeError(error)}`, { runs: this.inflight.size });
    });
  }
}
