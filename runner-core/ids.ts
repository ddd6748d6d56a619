import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'; // Crockford base32, as ULID

let lastTime = -1;
let lastRandom: number[] = [];

function randomDigits(): number[] {
  return Array.from(randomBytes(16), (b) => b & 31);
}

/** Increments the random part so ids made in the same millisecond still sort in creation order. */
function increment(digits: number[]): number[] {
  const next = digits.slice();
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 31) {
      next[i]!++;
      return next;
    }
    next[i] = 0;
  }
  return randomDigits();
}

/**
 * A run id: `wfr_` + 26 chars (10 of time, 16 random), ULID-style, so ids sort by creation time
 * and the run list can page by id.
 * @example newRunId() // "wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B"
 */
export function newRunId(now: number = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
    now = lastTime;
  } else {
    lastTime = now;
    lastRandom = randomDigits();
  }
  let time = '';
  for (let t = now, i = 0; i < 10; i++, t = Math.floor(t / 32)) time = ALPHABET[t % 32] + time;
  return 'wfr_' + time + lastRandom.map((d) => ALPHABET[d]).join('');
}

export const RUN_ID_PATTERN = /^wfr_[0-9A-HJKMNP-TV-Z]{26}$/;

/** A run id `@upstash/workflow` makes (`wfr_` + nanoid, or `wfr_` + the id given to `Client.trigger`). */
export const UPSTASH_RUN_ID_PATTERN = /^wfr_[A-Za-z0-9_-]{1,128}$/;
