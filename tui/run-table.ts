import type { Run, RunStatus } from '../api/dto.js';
import { zeroCounts } from '../view/status.js';

const SHARDS = 256;

/** Shard of a run id: its last characters are random (ULID-style), so they spread evenly. */
function shardOf(id: string): number {
  let hash = 0;
  for (let i = Math.max(0, id.length - 6); i < id.length; i++) hash = (hash * 31 + id.charCodeAt(i)) | 0;
  return hash & (SHARDS - 1);
}

export type StatusCounts = Readonly<Record<RunStatus, number>>;

const NO_COUNTS: StatusCounts = zeroCounts();

/**
 * Runs by id, immutable. One `Map` per shard: an update copies only the shards it touches
 * (about 40 entries at 10,000 runs), so the reducer stays pure and an event costs microseconds.
 * It also keeps the count of runs per status, for the status bar.
 */
export class RunTable {
  static readonly empty = new RunTable(
    Array.from({ length: SHARDS }, () => new Map()),
    0,
    NO_COUNTS,
  );

  private readonly shards: readonly ReadonlyMap<string, Run>[];
  readonly size: number;
  readonly counts: StatusCounts;

  private constructor(shards: readonly ReadonlyMap<string, Run>[], size: number, counts: StatusCounts) {
    this.shards = shards;
    this.size = size;
    this.counts = counts;
  }

  get(id: string): Run | undefined {
    return this.shards[shardOf(id)]!.get(id);
  }

  /** A table with `runs` put in (replacing any run with the same id). */
  with(runs: readonly Run[]): RunTable {
    if (runs.length === 0) return this;
    const shards = this.shards.slice();
    const copied = new Set<number>();
    const counts = { ...this.counts };
    let size = this.size;
    for (const run of runs) {
      const index = shardOf(run.id);
      if (!copied.has(index)) {
        shards[index] = new Map(shards[index]);
        copied.add(index);
      }
      const shard = shards[index] as Map<string, Run>;
      const old = shard.get(run.id);
      if (old) counts[old.status]--;
      else size++;
      counts[run.status]++;
      shard.set(run.id, run);
    }
    return new RunTable(shards, size, counts);
  }
}

/** Position of `id` in ids sorted newest first (descending), or where it would go. */
export function positionOf(ids: readonly string[], id: string): { index: number; found: boolean } {
  let low = 0;
  let high = ids.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (ids[mid]! > id) low = mid + 1;
    else high = mid;
  }
  return { index: low, found: ids[low] === id };
}

/**
 * `ids` (sorted newest first) with `add` merged in and `remove` taken out, in one pass.
 * Run ids are time-sortable, so id order is start order.
 */
export function mergeIds(
  ids: readonly string[],
  add: readonly string[],
  remove?: ReadonlySet<string>,
): readonly string[] {
  if (!remove || remove.size === 0) {
    if (add.length === 0) return ids;
    // A few new runs (the live case): insert each where it belongs, one array copy apiece.
    if (add.length <= 16) {
      let out = ids;
      for (const id of add) {
        const { index, found } = positionOf(out, id);
        if (!found) out = out.toSpliced(index, 0, id);
      }
      return out;
    }
  }
  const sorted = [...new Set(add)].sort().reverse();
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < ids.length || j < sorted.length) {
    const take = j >= sorted.length || (i < ids.length && ids[i]! >= sorted[j]!) ? ids[i++]! : sorted[j++]!;
    if (out[out.length - 1] === take || remove?.has(take)) continue;
    out.push(take);
  }
  return out;
}
