import { DEFAULT_FLOW_PERIOD_MS } from '../../protocol/flow-control.js';

/** The flow columns of a due run, as both stores read them. */
export interface FlowCandidate {
  id: string;
  flow_key: string | null;
  flow_parallelism: number | null;
  flow_rate: number | null;
  flow_period_ms: number | null;
  /** When first driven: a run coming back (after a sleep, a wait, a lost lease) is not a new start. */
  flow_started_at: number | null;
}

/** What a key is using now, read inside the claim transaction. */
export interface FlowUsage {
  /** Unfinished runs of the key holding a live lease: a sleeping or waiting run holds none. */
  executing: number;
  /** Runs of the key first driven within the last period. */
  startedInPeriod: number;
  /** The oldest of those first drives: the rate frees a slot one period after it. */
  oldestStart: number | null;
}

/**
 * A parallelism slot frees when a run of the key releases its lease, which the claim does not see
 * coming: a full key is looked at again this much later (the latency of a freed slot).
 */
export const FLOW_RECHECK_MS = 200;

export interface Admission<T extends FlowCandidate> {
  admitted: T[];
  /** Runs left waiting, with when to look at their key again. */
  parked: Parked[];
}

/** A run left waiting: when to look at its key again, and why, in the words the views show. */
export interface Parked {
  id: string;
  until: number;
  reason: string;
}

function period(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/**
 * Which due runs a claim may lease, oldest first. A run without a key always goes. Within a key the
 * order is FIFO: once one run of a key is refused, every later one of that key is too, so a later
 * run never overtakes an earlier one when a slot frees.
 */
export function admit<T extends FlowCandidate>(
  candidates: readonly T[],
  limit: number,
  now: number,
  usage: (key: string, periodMs: number) => FlowUsage,
): Admission<T> {
  const admitted: T[] = [];
  const parked: Parked[] = [];
  const used = new Map<string, FlowUsage>();
  // Keys closed to every run (parallelism), and closed to new starts only (rate).
  const full = new Map<string, { until: number; reason: string }>();
  const rateSpent = new Map<string, { until: number; reason: string }>();
  for (const run of candidates) {
    if (admitted.length >= limit) break;
    const key = run.flow_key;
    if (key === null) {
      admitted.push(run);
      continue;
    }
    const isStart = run.flow_started_at === null;
    const shut = full.get(key) ?? (isStart ? rateSpent.get(key) : undefined);
    if (shut !== undefined) {
      parked.push({ id: run.id, ...shut });
      continue;
    }
    const periodMs = run.flow_period_ms ?? DEFAULT_FLOW_PERIOD_MS;
    let current = used.get(key);
    if (!current) {
      current = usage(key, periodMs);
      used.set(key, current);
    }
    if (run.flow_parallelism !== null && current.executing >= run.flow_parallelism) {
      const shut = {
        until: now + FLOW_RECHECK_MS,
        reason: `flow control \`${key}\`: ${current.executing} of ${run.flow_parallelism} running`,
      };
      full.set(key, shut);
      parked.push({ id: run.id, ...shut });
      continue;
    }
    if (isStart && run.flow_rate !== null && current.startedInPeriod >= run.flow_rate) {
      const until = Math.max(now + 1, (current.oldestStart ?? now) + periodMs);
      const shut = {
        until,
        reason: `flow control \`${key}\`: ${current.startedInPeriod} of ${run.flow_rate} started in the last ${period(periodMs)}`,
      };
      rateSpent.set(key, shut);
      parked.push({ id: run.id, ...shut });
      continue;
    }
    admitted.push(run);
    current.executing += 1;
    if (isStart) {
      current.startedInPeriod += 1;
      current.oldestStart ??= now;
    }
  }
  return { admitted, parked };
}
