// Bounds: every wait in the bench has a deadline.

/** Rejects with a message naming `label` if `promise` takes longer than `ms`. */
export function withTimeout(promise, ms, label) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${label}: no result after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A deadline `ms` from now: `left()` ms remain, `passed()` once it is over. */
export function deadline(ms) {
  const end = performance.now() + ms;
  return { left: () => Math.max(0, end - performance.now()), passed: () => performance.now() >= end };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
