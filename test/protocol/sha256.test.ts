import { describe, expect, it } from 'vitest';
import { hmacSha256, sha256 } from '../../protocol/sha256.js';
import { SYNC_VERIFY_MAX_BYTES, signRequest, verifyRequest } from '../../protocol/signing.js';
import { seededRandom, seedFromEnv } from '../helpers/seeded-random.js';

/**
 * The plain-JS SHA-256 and HMAC the route verifies small drive requests with (protocol/sha256.ts)
 * agree with Web Crypto's, at every length around the block and padding boundaries and for keys
 * shorter and longer than a block; and a signed request verifies on both sides of the size at
 * which verification moves to Web Crypto.
 */

const seed = seedFromEnv();
const random = seededRandom(seed);
const hex = (bytes: ArrayBuffer | Uint8Array): string => Buffer.from(new Uint8Array(bytes)).toString('hex');

async function webSha256(bytes: Uint8Array): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
}

async function webHmac(key: Uint8Array, message: Uint8Array): Promise<string> {
  const imported = await crypto.subtle.importKey(
    'raw',
    key as Uint8Array<ArrayBuffer>,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return hex(await crypto.subtle.sign('HMAC', imported, message as Uint8Array<ArrayBuffer>));
}

describe(`sha256 (seed ${seed})`, () => {
  it('matches the FIPS 180-4 examples', () => {
    const text = (s: string): Uint8Array => new TextEncoder().encode(s);
    expect(hex(sha256(text('')))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(hex(sha256(text('abc')))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hex(sha256(text('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')))).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('agrees with Web Crypto at every length from 0 to 300 bytes and at larger ones', async () => {
    const lengths = [...Array.from({ length: 301 }, (_, n) => n), 1000, 4095, 4096, 4097, 65_537];
    for (const length of lengths) {
      const bytes = new Uint8Array(random.bytes(length));
      expect(hex(sha256(bytes)), `length ${length}`).toBe(await webSha256(bytes));
    }
  });
});

describe(`hmacSha256 (seed ${seed})`, () => {
  it('agrees with Web Crypto for keys shorter than, as long as, and longer than a block', async () => {
    for (const keyLength of [1, 32, 63, 64, 65, 200]) {
      for (const messageLength of [0, 1, 55, 56, 64, 119, 500]) {
        const key = new Uint8Array(random.bytes(keyLength));
        const message = new Uint8Array(random.bytes(messageLength));
        expect(hex(hmacSha256(key, message)), `key ${keyLength}, message ${messageLength}`).toBe(
          await webHmac(key, message),
        );
      }
    }
  });
});

describe('verifyRequest on both sides of SYNC_VERIFY_MAX_BYTES', () => {
  const url = 'https://app.example.com/api/workflow';
  for (const size of [10, SYNC_VERIFY_MAX_BYTES, SYNC_VERIFY_MAX_BYTES + 1]) {
    it(`accepts a body of ${size} bytes it signed, and rejects it tampered`, async () => {
      const body = 'x'.repeat(size);
      const headers = new Headers(await signRequest({ url, body, tokens: ['t0ken-of-the-app'] }));
      await expect(verifyRequest({ headers, body, urls: [url], token: 't0ken-of-the-app' })).resolves.toMatchObject({});
      await expect(
        verifyRequest({ headers, body: `${body.slice(1)}y`, urls: [url], token: 't0ken-of-the-app' }),
      ).rejects.toMatchObject({ code: 'SIGNATURE' });
      await expect(verifyRequest({ headers, body, urls: [url], token: 'another-token' })).rejects.toMatchObject({
        code: 'SIGNATURE',
      });
    });
  }
});
