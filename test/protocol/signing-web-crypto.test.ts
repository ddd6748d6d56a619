import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Header } from '../../protocol/headers.js';

/**
 * A host without `node:crypto` (no `process.getBuiltinModule`): `protocol/signing.ts` then verifies
 * with Web Crypto, and accepts exactly what the node:crypto path accepts. The module is loaded
 * afresh with the lookup removed, and the lookup is put back afterwards.
 */

const saved = process.getBuiltinModule;
let signing: typeof import('../../protocol/signing.js');

beforeAll(async () => {
  (process as { getBuiltinModule?: unknown }).getBuiltinModule = undefined;
  vi.resetModules();
  signing = await import('../../protocol/signing.js');
});
afterAll(() => {
  process.getBuiltinModule = saved;
  vi.resetModules();
});

describe('verifyRequest on Web Crypto only', () => {
  it('has no synchronous path, accepts what it signed and refuses a tampered body or another token', async () => {
    expect(signing.syncSigning).toBeUndefined();
    const url = 'https://app.example.com/api/workflow';
    const body = JSON.stringify({ v: 1, text: 'ü' });
    const now = Math.floor(Date.now() / 1000);
    const headers = new Headers(
      await signing.signRequest({ url, body, tokens: ['token-a'], timestamp: now, deadline: Date.now() + 30_000 }),
    );
    await expect(signing.verifyRequest({ headers, body, urls: [url], token: 'token-a' })).resolves.toBeDefined();
    await expect(signing.verifyRequest({ headers, body: `${body} `, urls: [url], token: 'token-a' })).rejects.toThrow(
      /Invalid signature/,
    );
    await expect(signing.verifyRequest({ headers, body, urls: [url], token: 'token-b' })).rejects.toThrow(
      /Invalid signature/,
    );
  });
});

describe('the synchronous path', () => {
  it('signs exactly as Web Crypto does', async () => {
    vi.resetModules();
    process.getBuiltinModule = saved;
    const { syncSigning, signRequest, sha256Hex, signedContent } = await import('../../protocol/signing.js');
    (process as { getBuiltinModule?: unknown }).getBuiltinModule = undefined;
    expect(syncSigning).toBeDefined();
    const body = 'ü'.repeat(1000);
    expect(syncSigning!.sha256Hex(body)).toBe(await sha256Hex(body));
    const options = { url: 'http://127.0.0.1:1/w', body, tokens: ['token-a'], id: 'm1', timestamp: 1, deadline: 2 };
    const content = signedContent('m1', 1, 2, options.url, await sha256Hex(body));
    expect((await signRequest(options))[Header.Signature]).toBe(syncSigning!.signature('token-a', content));
  });
});
