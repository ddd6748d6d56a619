import { describe, expect, it } from 'vitest';
import { Header } from '../../protocol/headers.js';
import { signRequest } from '../../protocol/signing.js';
import { createHandler } from '../../serve/core/handler.js';
import { MAX_DRIVE_BODY_BYTES } from '../../serve/core/options.js';

/**
 * A request that only claims a signature must cost no body reading: the handler is called with a
 * body stream that counts what it hands out, in process, so nothing buffers in between.
 */
const URL_ = 'https://app.example.com/api/workflow';
const TOKEN = 'claim-test-token';
const CHUNK = 64 * 1024;

/** A body of `total` bytes made on demand; `pulled()` says how many the consumer has taken. */
function countingBody(total: number): { body: ReadableStream<Uint8Array>; pulled: () => number } {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= total) return controller.close();
        pulled += CHUNK;
        controller.enqueue(new Uint8Array(CHUNK));
      },
    },
    { highWaterMark: 0 },
  );
  return { body, pulled: () => pulled };
}

const handle = createHandler(async () => 1, { token: TOKEN, runnerUrl: 'http://127.0.0.1:9', url: URL_ });
const post = (headers: Record<string, string>, body: ReadableStream<Uint8Array>): Promise<Response> =>
  handle(new Request(URL_, { method: 'POST', headers, body, duplex: 'half' } as RequestInit));

describe('a claimed signature is checked before the body is read', () => {
  const valid = async (): Promise<Record<string, string>> => signRequest({ url: URL_, body: 'x', tokens: [TOKEN] });

  it.each([
    ['one header only', 401, 'SIGNATURE', async () => ({ [Header.Signature]: 'v1,whatever' })],
    [
      'a malformed signature list',
      401,
      'SIGNATURE',
      async () => ({ ...(await valid()), [Header.Signature]: 'v1,' + 'A'.repeat(5000) }),
    ],
    // Late is not forged: 408, which the runner retries as a delay on the way.
    [
      'a deadline already past',
      408,
      'LATE',
      async () => signRequest({ url: URL_, body: 'x', tokens: [TOKEN], deadline: Date.now() - 1 }),
    ],
    [
      'a timestamp outside the window',
      401,
      'SIGNATURE',
      async () =>
        signRequest({
          url: URL_,
          body: 'x',
          tokens: [TOKEN],
          timestamp: Math.floor(Date.now() / 1000) - 3600,
          deadline: Date.now() + 30_000,
        }),
    ],
    ['a probe without a signature', 401, 'SIGNATURE', async () => ({ [Header.Probe]: '1' })],
  ] as const)('%s: %i, with no byte of the body pulled', async (_label, status, code, headers) => {
    const { body, pulled } = countingBody(8 * MAX_DRIVE_BODY_BYTES);
    const response = await post(await headers(), body);
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
    expect(pulled()).toBe(0);
  });

  it('a well-formed claim is read up to the cap and answered 413 past it, reading no further', async () => {
    const { body, pulled } = countingBody(8 * MAX_DRIVE_BODY_BYTES);
    const response = await post(await valid(), body);
    expect(response.status).toBe(413);
    expect(pulled()).toBeGreaterThan(MAX_DRIVE_BODY_BYTES);
    expect(pulled()).toBeLessThanOrEqual(MAX_DRIVE_BODY_BYTES + 2 * CHUNK);
  });

  it('a well-formed claim with a wrong signature is read (to hash it) and refused 401', async () => {
    const { body, pulled } = countingBody(CHUNK);
    const response = await post(await valid(), body);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain(
      `over this route's URL ${URL_}`,
    );
    expect(pulled()).toBe(CHUNK);
  });
});
