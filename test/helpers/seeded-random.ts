/**
 * A small seeded PRNG (mulberry32) for the fuzz and chaos suites: the same seed gives the same
 * requests and the same faults, so a failure printed with its seed can be replayed exactly with
 * `WF_FUZZ_SEED=<seed>`.
 */

export interface SeededRandom {
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [0, n). */
  int(n: number): number;
  /** An integer in [min, max]. */
  between(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** `n` random bytes. */
  bytes(n: number): Buffer;
  /** A lowercase hex string of `n` characters. */
  hex(n: number): string;
}

/** `WF_FUZZ_SEED` when set (an integer), else a fresh seed; either way it is printed by the suites. */
export function seedFromEnv(fallback: number = Date.now() % 2 ** 31): number {
  const text = process.env.WF_FUZZ_SEED;
  if (text === undefined || text === '') return fallback;
  const seed = Number(text);
  if (!Number.isInteger(seed)) throw new Error(`Expected WF_FUZZ_SEED to be an integer, got "${text}".`);
  return seed >>> 0;
}

/**
 * @example
 * const random = seededRandom(42);
 * random.pick(['GET', 'POST']); // the same every time for seed 42
 */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  return {
    seed,
    next,
    int,
    between: (min, max) => min + int(max - min + 1),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('Expected a non-empty list to pick from.');
      return items[int(items.length)]!;
    },
    bytes: (n) => Buffer.from(Array.from({ length: n }, () => int(256))),
    hex: (n) => Array.from({ length: n }, () => int(16).toString(16)).join(''),
  };
}
