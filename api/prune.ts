import { ProtocolError } from '../protocol/errors.js';
import { describe, expectInteger, expectObject, optionalInteger, type Fields } from '../protocol/validate.js';

/**
 * `POST /v1/prune`: deletes the runs that finished more than `olderThanMs` ago and owe nothing
 * (runner-core/retention/), with every row under them. One call does at most `maxRuns` runs and
 * answers a `cursor` to go on from, so a long prune shows progress and no request runs for long.
 * Shared by the runner (which parses requests with it) and the `Client` (which parses answers).
 */
export interface PruneRequest {
  /** Runs that finished at least this long ago (ms); 0 or more. */
  olderThanMs: number;
  /** Only count what would be deleted. */
  dryRun?: boolean;
  /** Where the previous call stopped (its answer's `cursor`). */
  cursor?: string;
  /** At most this many runs this call. @default PRUNE_MAX_RUNS */
  maxRuns?: number;
}

/** Rows deleted (or, on a dry run, that would be). */
export interface PruneCounts {
  runs: number;
  steps: number;
  attempts: number;
  stepLogs: number;
  /** QStash messages (of the runs, and settled ones of no run). */
  messages: number;
  /** QStash waits and kept events of the runs. */
  waits: number;
  /** Finished runs kept because something is still owed through the QStash API (a failure callback). */
  kept: number;
}

export interface PruneResult extends PruneCounts {
  /** Where to go on from; null when every old enough run has been looked at. */
  cursor: string | null;
  /** Another runner of the same database is pruning right now; nothing was done: call again. */
  busy: boolean;
}

/** Runs per call at most (and the default). */
export const PRUNE_MAX_RUNS = 10_000;

export const PRUNE_COUNT_KEYS = [
  'runs',
  'steps',
  'attempts',
  'stepLogs',
  'messages',
  'waits',
  'kept',
] as const satisfies readonly (keyof PruneCounts)[];

export function emptyPruneCounts(): PruneCounts {
  return { runs: 0, steps: 0, attempts: 0, stepLogs: 0, messages: 0, waits: 0, kept: 0 };
}

/** `a` plus `b`, field by field. */
export function addPruneCounts(a: PruneCounts, b: Partial<PruneCounts>): PruneCounts {
  const sum = { ...a };
  for (const key of PRUNE_COUNT_KEYS) sum[key] += b[key] ?? 0;
  return sum;
}

function optionalCursor(o: Fields, where: string): string | undefined {
  if (o.cursor === undefined || o.cursor === null) return undefined;
  if (typeof o.cursor !== 'string' || o.cursor.length > 200)
    throw new ProtocolError(
      `Expected \`cursor\` in ${where} to be the cursor a previous answer gave, got ${describe(o.cursor)}.`,
    );
  return o.cursor;
}

export function parsePruneRequest(u: unknown, where = 'the prune request'): PruneRequest {
  const o = expectObject(u, where);
  const olderThanMs = expectInteger(o, 'olderThanMs', where);
  if (o.dryRun !== undefined && typeof o.dryRun !== 'boolean')
    throw new ProtocolError(`Expected \`dryRun\` in ${where} to be a boolean, got ${describe(o.dryRun)}.`);
  const maxRuns = optionalInteger(o, 'maxRuns', where, 1);
  if (maxRuns !== undefined && maxRuns > PRUNE_MAX_RUNS)
    throw new ProtocolError(`Expected \`maxRuns\` in ${where} to be at most ${PRUNE_MAX_RUNS}, got ${maxRuns}.`);
  const cursor = optionalCursor(o, where);
  return {
    olderThanMs,
    ...(o.dryRun === true && { dryRun: true }),
    ...(cursor !== undefined && { cursor }),
    ...(maxRuns !== undefined && { maxRuns }),
  };
}

export function parsePruneResult(u: unknown, where = 'the prune answer'): PruneResult {
  const o = expectObject(u, where);
  const counts = emptyPruneCounts();
  for (const key of PRUNE_COUNT_KEYS) counts[key] = expectInteger(o, key, where);
  if (typeof o.busy !== 'boolean')
    throw new ProtocolError(`Expected \`busy\` in ${where} to be a boolean, got ${describe(o.busy)}.`);
  return { ...counts, cursor: optionalCursor(o, where) ?? null, busy: o.busy };
}
