import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../cli/errors.js';
import { generateToken } from '../../cli/lib/token.js';
import { MIN_TOKEN_BITS, assertStrongTokens, estimateTokenBits } from '../../cli/lib/token-strength.js';
import { namedTokensFromEnv } from '../../cli/lib/start-env.js';

describe('estimateTokenBits', () => {
  it.each([
    ['', 0],
    ['x', 1],
    ['a'.repeat(64), 4], // one character: an alphabet of 2 at most, and 4 positions counted
    ['ab'.repeat(100), 16],
    ['hunter2', 26],
    ['wf_start_current_token', 103],
    ['wf_test_token_0123456789', 125],
    ['0123456789abcdef'.repeat(2), 128], // hex: 16 symbols, 4 bits each
    ['0123456789ABCDEF'.repeat(4), 256],
  ])('%j scores %i bits', (token, bits) => {
    expect(estimateTokenBits(token)).toBe(bits);
  });

  it('passes what `openssl rand -hex 32`, `-base64 32` and `wf dev` make, every time', () => {
    for (let i = 0; i < 500; i++) {
      expect(estimateTokenBits(randomBytes(32).toString('hex'))).toBeGreaterThanOrEqual(MIN_TOKEN_BITS);
      expect(estimateTokenBits(randomBytes(32).toString('base64'))).toBeGreaterThanOrEqual(MIN_TOKEN_BITS);
      expect(estimateTokenBits(generateToken())).toBeGreaterThanOrEqual(MIN_TOKEN_BITS);
    }
  });

  it('refuses words, names and short tokens', () => {
    for (const token of [
      'password',
      'correcthorse',
      'my-secret-token-2024',
      'wf_multi_runner_test_token',
      randomBytes(8).toString('hex'),
    ]) {
      expect(estimateTokenBits(token), token).toBeLessThan(MIN_TOKEN_BITS);
    }
  });
});

describe('assertStrongTokens', () => {
  it('names the first weak token by where it was set, with its estimate, never the token', () => {
    const strong = randomBytes(32).toString('hex');
    const tokens = namedTokensFromEnv({ WF_TOKENS: `${strong}, hunter2` });
    expect(tokens.map((t) => t.name)).toEqual(['WF_TOKENS entry 1', 'WF_TOKENS entry 2']);
    let error: unknown;
    try {
      assertStrongTokens(tokens, '0.0.0.0');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({ exitCode: 2, code: 'WEAK_TOKEN' });
    const message = (error as Error).message;
    expect(message).toBe(
      'Refusing to listen on 0.0.0.0 with a weak token: WF_TOKENS entry 2 has about 26 bits of entropy, expected at least 128; make one with `openssl rand -hex 32` (256 bits), or use the token `wf dev` saved in .wf/token.',
    );
    expect(message).not.toContain('hunter2');
    expect(() => assertStrongTokens([{ token: strong, name: 'WF_TOKEN' }], '0.0.0.0')).not.toThrow();
  });

  it('names WF_TOKEN and SERVICE_TOKEN as such', () => {
    expect(namedTokensFromEnv({ WF_TOKEN: 'a' })).toEqual([{ token: 'a', name: 'WF_TOKEN' }]);
    expect(namedTokensFromEnv({ SERVICE_TOKEN: 'b' })).toEqual([{ token: 'b', name: 'SERVICE_TOKEN' }]);
    expect(namedTokensFromEnv({ WF_TOKENS: 'a b', WF_TOKEN: 'a' })).toEqual([
      { token: 'a', name: 'WF_TOKENS entry 1' },
      { token: 'b', name: 'WF_TOKENS entry 2' },
    ]);
  });
});
