import { describeError, type Logger } from '../logger.js';
import { FINISHED_RUN_STATUSES, type Store } from '../store/types.js';
import { resultStepId, type QstashWaitStore } from './waits.js';
import type { QstashWaits } from './waits-service.js';

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
  /** Timeouts taken per look. @default 100 */
  batch?: number;
}

/**
 * Ends the Upstash-protocol waits whose timeout passed: each is leased (so of several runners one
 * delivers it), its result (`waitTimeout: true`) is delivered as one more step of the run, and
 * only then deleted, so a crash in between delivers it again after the lease (at least once).
 * A wait whose run is gone or finished is dropped.
 */
export class WaitTimeouts {
  readonly #o: Required<Omit<WaitTimeoutsOptions, 'now'>> & { now: () => number };
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> = Promise.resolve();
  #stopped = true;

  constructor(options: WaitTimeoutsOptions) {
    this.#o = { pollMs: 1_000, leaseMs: 30_000, batch: 100, now: Date.now, ...options };
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.fireDue()
        .catch((error: unknown) => this.#o.logger.error(`Upstash wait timeouts: ${describeError(error)}`))
        .finally(() => this.#schedule());
    }, this.#o.pollMs);
    this.#timer.unref?.();
  }

  /** One look: delivers every timeout due now; resolves how many were delivered. */
  async fireDue(): Promise<number> {
    const { store, waitStore, waits, logger } = this.#o;
    const due = await waitStore.claimTimedOut(this.#o.now(), this.#o.leaseMs, this.#o.batch);
    let delivered = 0;
    for (const wait of due) {
      const key = [wait.runId, wait.eventId, resultStepId(wait.step)] as const;
      const run = await store.getRun(wait.runId);
      if (!run || FINISHED_RUN_STATUSES.has(run.status)) {
        await waitStore.deleteWait(...key);
        continue;
      }
      try {
        await waits.timeOut(wait);
        await waitStore.deleteWait(...key);
        delivered++;
      } catch (error) {
        // Left leased: tried again when the lease ends.
        logger.warn(`wait ${wait.eventId} of run ${wait.runId} timed out, but its delivery failed (tried again): ${describeError(error)}`);
      }
    }
    return delivered;
  }
}
