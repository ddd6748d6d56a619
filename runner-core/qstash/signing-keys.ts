import { randomBytes } from 'node:crypto';

/** The pair's type lives with the signing (signature.ts); `wf dev` makes new pairs here. */
export type { UpstashSigningKeys } from './signature.js';

/**
 * A new signing key: `sig_` and 32 random bytes (base64url), shaped like QStash's own keys.
 * @example generateUpstashSigningKey(); // 'sig_3Jc…'
 */
export function generateUpstashSigningKey(): string {
  return 'sig_' + randomBytes(32).toString('base64url');
}
