import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { addPruneCounts, emptyPruneCounts, type PruneCounts } from '../../api/prune.js';
import type { MessageStore } from '../qstash/messages/store.js';
import type { QstashWaitStore } from '../qstash/waits/waits.js';
import type { PruneCursor, RetentionStore } from '../store/types.js';

/** Where a finished run's rows live: the core store's tables, and the QStash parts' (absent on a store without them). */
export interface PruneParts {
  retention: RetentionStore;
  messages?: MessageStore;
  waits?: QstashWaitStore;
}

export interface PrunePassOptions {
  /** Runs that finished before this (epoch ms). */
  finishedBefore: number;
  dryRun: boolean;
  /** Go on after this run (a previous pass's cursor); null: from the oldest. */
  after: PruneCursor | null;
  /** Runs looked at this pass, at most (a pass holds the prune lock: bounded, so others get a turn). */
  maxRuns: number;
  /** Runs per batch, fixed (tests); by default adapted to take about `BATCH_TARGET_MS` each (`nextBatchSize`). */
  batchSize?: number;
  /** Told the running totals after every batch (progress). */
  onBatch?: (totals: PruneCounts) => void;
}

export interface PrunePassResult extends PruneCounts {
  /** Where this pass stopped; null when no finished run old enough is left after it. */
  cursor: PruneCursor | null;
  /** Another runner held the prune lock: nothing was done. */
  busy: boolean;
}

/**
 * Runs per batch: adapted after every batch so that one takes about `BATCH_TARGET_MS`. On SQLite a
 * batch's transactions run on the thread that also drives runs (and wait for fsync), so a drive's
 * commit waits at most about that long; measured on a loaded 2-core machine, 200 runs of 5 steps
 * took 40 to 120 ms, 50 runs about 10. On PostgreSQL it keeps each statement, and its row locks, short.
 */
export const BATCH_TARGET_MS = 10;
const BATCH_MIN = 10;
const BATCH_MAX = 500;
const BATCH_FIRST = 50;

/** The next batch's size after one of `size` runs took `tookMs`: halved when too slow, doubled when well under the target. */
export function nextBatchSize(size: number, tookMs: number): number {
  if (tookMs > BATCH_TARGET_MS) return Math.max(BATCH_MIN, Math.floor(size / 2));
  if (tookMs < BATCH_TARGET_MS / 2) return Math.min(BATCH_MAX, size * 2);
  return size;
}

/**
 * One pruning pass: walks finished runs that owe nothing, oldest first, in batches; for each
 * batch the QStash parts go first (keeping runs that still owe a message), then the runs with their
 * steps, attempts and step logs. Once the walk is done, settled QStash messages of no run go too.
 * Holds the store's prune lock (several runners on PostgreSQL: one prunes, the others skip).
 *
 * @example
 * await prunePass({ retention: store.retention }, { finishedBefore: Date.now() - 30 * 86_400_000, dryRun: false, after: null, maxRuns: 10_000 });
 */
export async function prunePass(parts: PruneParts, options: PrunePassOptions): Promise<PrunePassResult> {
  const outcome = await parts.retention.exclusively(() => walk(parts, options));
  return outcome.ran ? outcome.value : { ...emptyPruneCounts(), cursor: options.after, busy: true };
}

async function walk(
  parts: PruneParts,
  { finishedBefore, dryRun, after, maxRuns, batchSize, onBatch }: PrunePassOptions,
): Promise<PrunePassResult> {
  let totals = emptyPruneCounts();
  let cursor = after;
  let looked = 0;
  let size = batchSize ?? BATCH_FIRST;
  while (looked < maxRuns) {
    const began = performance.now();
    const batch = await parts.retention.candidates({
      finishedBefore,
      after: cursor,
      limit: Math.min(size, maxRuns - looked),
    });
    if (batch.length === 0) {
      totals = addPruneCounts(totals, {
        messages: await pruneSettledMessages(parts, { before: finishedBefore, dryRun, batchSize: size }),
      });
      onBatch?.(totals);
      return { ...totals, cursor: null, busy: false };
    }
    looked += batch.length;
    cursor = batch[batch.length - 1]!;
    totals = addPruneCounts(
      totals,
      await pruneBatch(parts, { runIds: batch.map((run) => run.id), finishedBefore, dryRun }),
    );
    onBatch?.(totals);
    if (batchSize === undefined) size = nextBatchSize(size, performance.now() - began);
    // Drives, commits and API requests run between two batches.
    await yieldToEventLoop();
  }
  return { ...totals, cursor, busy: false };
}

async function pruneBatch(
  parts: PruneParts,
  { runIds, finishedBefore, dryRun }: { runIds: string[]; finishedBefore: number; dryRun: boolean },
): Promise<Partial<PruneCounts>> {
  const { kept, messages } = parts.messages
    ? await parts.messages.pruneRuns(runIds, { dryRun })
    : { kept: [], messages: 0 };
  const owed = new Set(kept);
  const victims = owed.size === 0 ? runIds : runIds.filter((id) => !owed.has(id));
  const waits = parts.waits ? await parts.waits.pruneRuns(victims, { dryRun }) : 0;
  const rows = await parts.retention.deleteRuns(victims, { finishedBefore, dryRun });
  return { ...rows, messages, waits, kept: owed.size };
}

/** Settled messages of no run (a plain publish), in batches like the runs. */
async function pruneSettledMessages(
  parts: PruneParts,
  { before, dryRun, batchSize }: { before: number; dryRun: boolean; batchSize: number },
): Promise<number> {
  if (!parts.messages) return 0;
  // A dry run counts them in one query (the partial index holds settled ones only): deleting nothing, it could not page.
  if (dryRun) return parts.messages.pruneSettled({ before, limit: 1_000_000, dryRun });
  let total = 0;
  for (;;) {
    const deleted = await parts.messages.pruneSettled({ before, limit: batchSize, dryRun });
    total += deleted;
    if (deleted < batchSize) return total;
    await yieldToEventLoop();
  }
}

/** A cursor as the API carries it: `<finishedAt>.<runId>`. */
export function formatPruneCursor(cursor: PruneCursor | null): string | null {
  return cursor === null ? null : `${cursor.finishedAt}.${cursor.id}`;
}

/** The cursor an answer gave back, or undefined when it is not one. */
export function parsePruneCursor(text: string): PruneCursor | undefined {
  const match = /^(\d{1,16})\.(.+)$/.exec(text);
  return match ? { finishedAt: Number(match[1]), id: match[2]! } : undefined;
}
