import { createHash, createHmac, randomUUID } from 'node:crypto';
import { secretKey } from '../secret-keys.js';

/**
 * The `Upstash-Signature` QStash puts on every delivery: an HS256 JWT signed with the current
 * signing key, which `@upstash/qstash`'s `Receiver` verifies (with QSTASH_CURRENT_SIGNING_KEY, then
 * QSTASH_NEXT_SIGNING_KEY): issuer "Upstash", subject the destination URL, `body` the base64url
 * SHA-256 of the exact body sent. Built on node:crypto (three HMAC inputs, no JWT library needed).
 */

/** The two keys a QStash app verifies deliveries with; the runner signs with `current`. */
export interface UpstashSigningKeys {
  current: string;
  next: string;
}

/**
 * How long a signature stays valid. QStash gives its JWTs 5 minutes; the runner signs each delivery
 * the moment it sends it, so the app checks it within the request's own round trip, and a JWT seen
 * anywhere else (a proxy's log, the app's) is worth replaying for one minute at most. The SDK's
 * Receiver checks `exp` and `nbf` with no clock tolerance: runner and app clocks must agree to
 * within this minute (ahead) and a second (behind), as for the native path's signed deadline.
 */
export const DELIVERY_SIGNATURE_LIFETIME_SECONDS = 60;

const base64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/** The JWT for one delivery of `body` to `url`, signed with `key`. */
export function signDelivery(key: string, url: string, body: string, nowMs: number = Date.now()): string {
  const now = Math.floor(nowMs / 1000);
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(
    JSON.stringify({
      iss: 'Upstash',
      sub: url,
      exp: now + DELIVERY_SIGNATURE_LIFETIME_SECONDS,
      nbf: now,
      iat: now,
      jti: `jwt_${randomUUID().replaceAll('-', '')}`,
      body: createHash('sha256').update(body).digest('base64url'),
    }),
  );
  const signature = createHmac('sha256', secretKey(key)).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}
