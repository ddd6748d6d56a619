import { CliError } from '../errors.js';

/** Estimated bits a token must have where the runner listens beyond loopback. */
export const MIN_TOKEN_BITS = 128;

/** How to make a token that passes: what the refusal suggests. */
export const STRONG_TOKEN_HINT =
  'make one with `openssl rand -hex 32` (256 bits), or use the token `wf dev` saved in .wf/token';

const HEX = /^[0-9a-f]+$|^[0-9A-F]+$/;

/** Size of the alphabet the characters of `token` come from: the classes present. */
function alphabetOf(token: string): number {
  if (HEX.test(token)) return 16;
  let size = 0;
  if (/[a-z]/.test(token)) size += 26;
  if (/[A-Z]/.test(token)) size += 26;
  if (/[0-9]/.test(token)) size += 10;
  if (/[^a-zA-Z0-9]/.test(token)) size += 33; // punctuation, space, anything else
  return size;
}

/**
 * A token's strength in bits, estimated from what it looks like: log2 of its alphabet (the
 * character classes it uses: lowercase 26, uppercase 26, digits 10, others 33; hex alone 16)
 * per character. Repetition earns nothing: the alphabet counts for at most twice the distinct
 * characters used, and the length for at most four times them. Random tokens score about what
 * they hold (`openssl rand -hex 32`: 256); words, names and patterns score low.
 * @example estimateTokenBits('wf_' + randomBytes(24).toString('base64url')); // ≈ 170
 */
export function estimateTokenBits(token: string): number {
  const characters = [...token];
  const distinct = new Set(characters).size;
  if (distinct === 0) return 0;
  const alphabet = Math.min(alphabetOf(token), 2 * distinct);
  const length = Math.min(characters.length, 4 * distinct);
  return Math.floor(length * Math.log2(Math.max(alphabet, 1)));
}

export interface NamedToken {
  token: string;
  /** Where it was set, for messages (never the token itself): `WF_TOKENS entry 2`, `WF_TOKEN`. */
  name: string;
}

/**
 * Refuses (exit 2) the first token under {@link MIN_TOKEN_BITS}, naming where it was set and its
 * estimate, never the token.
 */
export function assertStrongTokens(tokens: readonly NamedToken[], host: string): void {
  for (const { token, name } of tokens) {
    const bits = estimateTokenBits(token);
    if (bits >= MIN_TOKEN_BITS) continue;
    throw new CliError(
      2,
      'WEAK_TOKEN',
      `Refusing to listen on ${host} with a weak token: ${name} has about ${bits} bits of entropy, expected at least ${MIN_TOKEN_BITS}; ${STRONG_TOKEN_HINT}.`,
    );
  }
}
