import { createHash, createHmac, randomUUID } from 'node:crypto';

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

/** How long a signature stays valid: the Receiver checks `exp` (and `nbf`). */
const LIFETIME_SECONDS = 5 * 60;

const base64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/** The JWT for one delivery of `body` to `url`, signed with `key`. */
export function signDelivery(key: string, url: string, body: string, nowMs: number = Date.now()): string {
  const now = Math.floor(nowMs / 1000);
  const header = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
  const payload = base64url(
    JSON.stringify({
      iss: 'Upstash',
      sub: url,
      exp: now + LIFETIME_SECONDS,
      nbf: now,
      iat: now,
      jti: `jwt_${randomUUID().replaceAll('-', '')}`,
      body: createHash('sha256').update(body).digest('base64url'),
    }),
  );
  const signature = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}
