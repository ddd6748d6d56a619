import type { Change } from '../store/types.js';

/**
 * The changes one chunk of a drive's outcome stream commits. A step whose `started` line and
 * result line came in the same chunk (every quick `run` step) becomes one `step-succeeded` change
 * that records its start too (`started`), so the store writes its row once instead of twice.
 * @example new ChunkChanges().add(started(3)).add(succeeded(3)).list() // [{ type: 'step-succeeded', index: 3, started: { group: null }, … }]
 */
export class ChunkChanges {
  readonly #changes: (Change | undefined)[] = [];
  /** Where each step started in this chunk stands in `#changes`, by step index. */
  readonly #starts = new Map<number, number>();

  add(change: Change): this {
    if (change.type === 'step-started') this.#starts.set(change.index, this.#changes.length);
    if (change.type === 'step-succeeded') {
      const at = this.#starts.get(change.index);
      const start = at === undefined ? undefined : this.#changes[at];
      if (start?.type === 'step-started') {
        this.#changes[at!] = undefined;
        this.#starts.delete(change.index);
        this.#changes.push({ ...change, started: { group: start.group } });
        return this;
      }
    }
    this.#changes.push(change);
    return this;
  }

  list(): Change[] {
    return this.#changes.filter((change) => change !== undefined);
  }
}
