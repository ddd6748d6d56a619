import type { Logger } from '../telemetry/logger.js';
import { describeError } from '../telemetry/logger.js';
import { LeaseLostError } from '../store/errors.js';
import type { Run, Store } from '../store/types.js';
import { WorkLoop } from './work-loop.js';

/** A run to drive: claimed (`isNew` false) or just created by a start that drives it at once. */
export interface Drive {
  run: Run;
  /** Just created by this runner's start: nothing committed yet, nothing owed to park on. */
  isNew: boolean;
}

/** One drive and the signal that aborts it (a cancel, a lost lease, the runner stopping). */
export interface DriveTask extends Drive {
  signal: AbortSignal;
}

/** Drives one claimed run; resolves true when its lease was released (or lost) on the way. */
export type DriveFn = (request: DriveTask) => Promise<boolean>;

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
 * Which runs this runner drives and for how long: the work loop (`work-loop.ts`) over the store's
 * runs. It claims due runs (leased to `owner`), renews the leases of runs in flight every lease/3,
 * wakes on new work or at the next due time (`pollMs` at most), and gives a drive's lease back
 * when the drive did not.
 */
export class Scheduler {
  private readonly options: SchedulerOptions;
  private readonly loop: WorkLoop<Drive>;

  constructor(options: SchedulerOptions) {
    this.options = options;
    const { store, owner, now, leaseMs, logger } = options;
    this.loop = new WorkLoop<Drive>({
      name: 'scheduler',
      logger,
      now,
      concurrency: options.concurrency,
      leaseMs,
      pollMs: options.pollMs,
      claim: async (limit) =>
        (await store.claimDue({ now: now(), limit, owner, leaseMs, onWaiting: options.onWaiting })).map((run) => ({
          run,
          isNew: false,
        })),
      key: (drive) => drive.run.id,
      // A lost lease was logged once, when the store first said so (`lose`); there is nothing to release.
      work: ({ run, isNew }, signal) =>
        options.drive({ run, isNew, signal }).catch((error: unknown): boolean => {
          if (LeaseLostError.is(error)) return true;
          throw error;
        }),
      failed: ({ run }, error) => logger.error(`driving ${run.id} failed: ${describeError(error)}`, { runId: run.id }),
      renew: (runIds) => store.renew(runIds, owner, now() + leaseMs),
      // Not fatal: the lease ends by itself after leaseMs and the run is claimed again then.
      release: (runId) =>
        store.release(runId, owner).catch((error: unknown) => {
          logger.error(
            `could not release the lease on run ${runId}; it is driven again once the lease expires: ${describeError(error)}`,
            { runId },
          );
        }),
      nextDueAt: () => store.nextDueAt(),
    });
  }

  /** True before `start` and from `stop` on. */
  get stopped(): boolean {
    return this.loop.stopped;
  }

  /** Drives in flight now. */
  get inFlight(): number {
    return this.loop.size;
  }

  /** Holds a drive slot for a start that drives its run at once, once committed (see `WorkLoop.reserve`). */
  reserve(): boolean {
    return this.loop.reserve();
  }

  unreserve(): void {
    this.loop.unreserve();
  }

  start(): void {
    this.loop.start();
  }

  /** Stops scheduling, gives in-flight drives `graceMs` to finish, then aborts them and waits. */
  stop(graceMs: number): Promise<void> {
    return this.loop.stop(graceMs);
  }

  /** Aborts a run's drive, if one is in flight here (a cancel). */
  abort(runId: string): void {
    this.loop.abort(runId);
  }

  isLost(runId: string): boolean {
    return this.loop.isLost(runId);
  }

  /**
   * The store said another runner holds this run now: its drive is aborted and not retried here,
   * and logged once. False when the run is not in flight here or was already marked lost.
   */
  lose(error: LeaseLostError): boolean {
    if (!this.loop.lose(error.runId)) return false;
    const holder = error.holder === null ? 'no runner holds it now' : `${error.holder} holds it now`;
    this.options.logger.error(
      `lost the lease on run ${error.runId} (${holder}: this runner stalled past its lease); stopped driving it here, nothing more of this drive is committed.`,
      { runId: error.runId, holder: error.holder },
    );
    return true;
  }

  /** Drives a run this runner holds the lease of (a start that drives at once). */
  launch(drive: Drive): void {
    this.loop.launch(drive);
  }

  /** Looks for due work now (coalesced), then sleeps until the next due time or `pollMs`. */
  wake(): void {
    this.loop.wake();
  }
}
