/**
 * How long and how often the runner keeps trying an app that does not answer (refused or reset
 * connections, DNS errors, timeouts, 502/503/504, a stream cut before its last line). An outage is
 * not the step's failure: it spends none of the step's retries, and only its length can fail a run.
 */
export interface UnreachablePolicy {
  /** First delay after the app stopped answering, in ms. @default 1000 */
  baseMs: number;
  /** Longest delay between two tries, in ms. @default 30 s */
  capMs: number;
  /** How long the app may stay unreachable before the run fails, in ms. @default 24 h */
  horizonMs: number;
}

export const DEFAULT_UNREACHABLE_BASE_MS = 1_000;
export const DEFAULT_UNREACHABLE_CAP_MS = 30_000;
export const DEFAULT_UNREACHABLE_HORIZON_MS = 24 * 60 * 60 * 1000;

export const DEFAULT_UNREACHABLE_POLICY: UnreachablePolicy = {
  baseMs: DEFAULT_UNREACHABLE_BASE_MS,
  capMs: DEFAULT_UNREACHABLE_CAP_MS,
  horizonMs: DEFAULT_UNREACHABLE_HORIZON_MS,
};

/**
 * Delay before the next try at an app unreachable since `since`: about as long as the outage has
 * lasted (so the tries are exponential without a counter to store: 1 s, 1 s, 2 s, 4 s…), between
 * `baseMs` and `capMs`, with equal jitter so the runs of one app don't all knock at once when it
 * comes back. A `Retry-After` (a 503 saying when to come back) is honoured, within the cap.
 * @example unreachableDelay(NOW - 8000, NOW, policy, undefined, () => 0.5) // 6000
 */
export function unreachableDelay(
  since: number,
  now: number,
  policy: UnreachablePolicy,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(policy.capMs, Math.max(0, retryAfterMs));
  const span = Math.min(policy.capMs, Math.max(policy.baseMs, now - since));
  return Math.round(span / 2 + random() * (span / 2));
}

/** Validates a policy given by an operator (flags, options): every field a positive number of ms. */
export function unreachablePolicy(options: Partial<UnreachablePolicy> = {}): UnreachablePolicy {
  const policy = { ...DEFAULT_UNREACHABLE_POLICY, ...options };
  for (const [name, value] of Object.entries(policy)) {
    if (!Number.isFinite(value) || value <= 0)
      throw new Error(
        `Expected the unreachable policy's \`${name}\` to be a positive number of ms, got ${String(value)}.`,
      );
  }
  if (policy.capMs < policy.baseMs)
    throw new Error(
      `Expected the unreachable policy's \`capMs\` (${policy.capMs}) to be at least its \`baseMs\` (${policy.baseMs}).`,
    );
  return policy;
}

/** What settling an attempt is given besides the run and the result: the instant, jitter's random source, the outage policy. */
export interface SettleClock {
  now: number;
  /** @default Math.random */
  random?: () => number;
  /** @default DEFAULT_UNREACHABLE_POLICY */
  unreachable?: UnreachablePolicy;
}
