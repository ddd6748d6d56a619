import { describeError, type Logger } from '../../telemetry/logger.js';
import { FINISHED_RUN_STATUSES, type Store } from '../../store/types.js';
import { WorkLoop } from '../../background/work-loop.js';
import { resultStepId, type QstashWaitStore, type Wait } from './waits.js';
import type { QstashWaits } from './service.js';

export interface WaitTimeoutsOptions {
  store: Pick<Store, 'getRun'>;
  waitStore: QstashWaitStore;
  waits: QstashWaits;
  logger: Logger;
  now?: () => number;
  /** Longest gap between two looks for timed-out waits. @default 1000 */
  pollMs?: number;
  /** How long a runner has to deliver a timeout it took before another may. @default 30000 */
  leaseMs?: number;
  /** Timeouts taken per look (and delivered at once at most). @default 100 */
  batch?: number;
}

/**
 * Ends the Upstash-protocol waits whose timeout passed, in the runner's work loop (`work-loop.ts`):
 * each is leased (so of several runners one delivers it), its result (`waitTimeout: true`) is
 * delivered as one more step of the run, and only then deleted, so a crash in between delivers it
 * again after the lease (at least once). A wait whose run is gone or finished is dropped.
 */
export class WaitTimeouts {
  readonly #o: Required<Omit<WaitTimeoutsOptions, 'now'>> & { now: () => number };
  readonly #loop: WorkLoop<Wait>;

  constructor(options: WaitTimeoutsOptions) {
    const o = (this.#o = { pollMs: 1_000, leaseMs: 30_000, batch: 100, now: Date.now, ...options });
    this.#loop = new WorkLoop<Wait>({
      name: 'Upstash wait timeouts',
      logger: o.logger,
      now: o.now,
      concurrency: o.batch,
      leaseMs: o.leaseMs,
      pollMs: o.pollMs,
      claim: (limit) => this.#claim(limit),
      key: (wait) => `${wait.runId} ${wait.eventId} ${resultStepId(wait.step)}`,
      work: async (wait) => {
        await this.#fire(wait);
        return false;
      },
      failed: (wait, error) =>
        o.logger.error(`Upstash wait timeouts: wait ${wait.eventId} of run ${wait.runId}: ${describeError(error)}`),
    });
  }

  start(): void {
    this.#loop.start();
  }

  /** Stops looking; a timeout being delivered is given `graceMs` (by default all it needs). */
  stop(graceMs = Infinity): Promise<void> {
    return this.#loop.stop(graceMs);
  }

  /** One look, outside the loop: delivers every timeout due now, one by one; resolves how many were delivered. */
  async fireDue(): Promise<number> {
    let delivered = 0;
    for (const wait of await this.#claim(this.#o.batch)) if (await this.#fire(wait)) delivered++;
    return delivered;
  }

  #claim(limit: number): Promise<Wait[]> {
    return this.#o.waitStore.claimTimedOut(this.#o.now(), this.#o.leaseMs, limit);
  }

  /** Delivers one timed-out wait; true when its result was delivered (false: dropped, or left leased to try again). */
  async #fire(wait: Wait): Promise<boolean> {
    const { store, waitStore, waits, logger } = this.#o;
    const key = [wait.runId, wait.eventId, resultStepId(wait.step)] as const;
    const run = await store.getRun(wait.runId);
    if (!run || FINISHED_RUN_STATUSES.has(run.status)) {
      await waitStore.deleteWait(...key);
      return false;
    }
    try {
      await waits.timeOut(wait);
      await waitStore.deleteWait(...key);
      return true;
    } catch (error) {
      // Left leased: tried again when the lease ends.
      logger.warn(
        `wait ${wait.eventId} of run ${wait.runId} timed out, but its delivery failed (tried again): ${describeError(error)}`,
      );
      return false;
    }
  }
}
