import { createSecretKey, type KeyObject } from 'node:crypto';

/** Few secrets sign anything (tokens, signing keys): past this many, the cache starts again. */
const MOST_KEYS = 64;
const keys = new Map<string, KeyObject>();

/**
 * `secret` as a `KeyObject`, made once: node:crypto's `createHmac` checks a raw string or Buffer
 * key the slow way (about 12 µs a call on Node 24, against under 2 µs for a KeyObject), and the
 * runner signs every drive and every delivery.
 */
export function secretKey(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= MOST_KEYS) keys.clear();
    keys.set(secret, (key = createSecretKey(Buffer.from(secret, 'utf8'))));
  }
  return key;
}
