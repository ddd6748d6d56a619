import { randomBytes } from 'node:crypto';

/**
 * The two keys the runner signs Upstash-protocol deliveries with (`Upstash-Signature`, HS256),
 * under the names the app's `Receiver` reads them: `QSTASH_CURRENT_SIGNING_KEY` and
 * `QSTASH_NEXT_SIGNING_KEY`. Deliveries are signed with `current`; the app also accepts `next`,
 * so a rotation moves `next` to `current` and sets a new `next` without a window of refusals.
 */
export interface UpstashSigningKeys {
  current: string;
  next: string;
}

/**
 * A new signing key: `sig_` and 32 random bytes (base64url), shaped like QStash's own keys.
 * @example generateUpstashSigningKey(); // 'sig_3Jc…'
 */
export function generateUpstashSigningKey(): string {
  return 'sig_' + randomBytes(32).toString('base64url');
}
