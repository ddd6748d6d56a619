import { createHash, timingSafeEqual } from 'node:crypto';

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
  /** True when `authorization` is `Bearer <one of the tokens>`. */
  check(authorization: string | undefined): boolean {
    const match = /^Bearer\s+(.+)$/i.exec(authorization ?? '');
    if (!match) return false;
    const offered = hashToken(match[1]!.trim());
    return this.hashes.some((h) => timingSafeEqual(h, offered));
  }
}
