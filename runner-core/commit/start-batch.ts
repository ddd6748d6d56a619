import type { CreatedRun, NewRun, Store } from '../store/types.js';

interface Pending {
  input: NewRun;
  resolve: (created: CreatedRun) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for starts: runs created during one turn of the event loop (the API's concurrent
 * `POST /v1/runs`, a burst of invokes or schedule ticks) go to the store together, so a burst of
 * starts costs one commit instead of one each (SQLite: one fsync; PostgreSQL: one statement).
 * `create` resolves once its run is durable.
 */
export class StartBatch {
  #pending: Pending[] = [];
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  create(input: NewRun): Promise<CreatedRun> {
    return new Promise<CreatedRun>((resolve, reject) => {
      if (this.#pending.push({ input, resolve, reject }) === 1) setImmediate(() => void this.#flush());
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = [];
    try {
      const results = await this.#store.createRuns(batch.map((p) => p.input));
      batch.forEach((p, i) => {
        const result = results[i]!;
        if (result.status === 'fulfilled') p.resolve(result.value);
        else p.reject(result.reason);
      });
    } catch (error) {
      for (const p of batch) p.reject(error);
    }
  }
}
