import { createHash, timingSafeEqual } from 'node:crypto';
import { unwrapQstashToken } from './qstash/qstash-token.js';

/** Tokens are kept as hashes for checking bearer credentials; raw ones only to sign with. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export class TokenSet {
  private readonly hashes: Buffer[];
  /** Current token first: drive requests carry a signature for each. */
  readonly signing: readonly string[];
  constructor(tokens: readonly string[]) {
    const unique = [...new Set(tokens.filter((t) => t !== ''))];
    this.signing = unique;
    this.hashes = unique.map(hashToken);
  }
  get size(): number {
    return this.hashes.length;
  }
  /**
   * True when `authorization` is `Bearer <one of the tokens>`, as it is or wrapped as a
   * `QSTASH_TOKEN` (base64 JSON with the token as `Password`, qstash/qstash-token.ts), the shape
   * `@upstash/workflow` decodes: an Upstash app's one token then works everywhere a token does.
   */
  check(authorization: string | undefined): boolean {
    const match = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
    if (!match) return false;
    const bearer = match[1]!.trim();
    if (this.#holds(bearer)) return true;
    const inner = unwrapQstashToken(bearer);
    return inner !== undefined && this.#holds(inner);
  }
  #holds(token: string): boolean {
    const offered = hashToken(token);
    return this.hashes.some((h) => timingSafeEqual(h, offered));
  }
}
