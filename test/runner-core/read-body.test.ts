import { describe, expect, it } from 'vitest';
import { readBody } from '../../runner-core/api/http-io.js';

/**
 * `readBody` (runner-core/api/http-io.ts): a body with a declared length within the limit is read
 * at once (`text()`, which the node adapter serves from the socket), still counted against the
 * limit; a body without one is read as a stream and cut at the limit.
 */

const post = (body: BodyInit, headers: Record<string, string> = {}): Request =>
  new Request('http://127.0.0.1/v1/runs', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);

const streamOf = (text: string): ReadableStream<Uint8Array> =>
  new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(text));
      controller.close();
    },
  });

describe('readBody', () => {
  it('reads a body of declared length', async () => {
    expect(await readBody(post('{"url":"ü"}', { 'content-length': '12' }), 100)).toBe('{"url":"ü"}');
  });

  it('refuses a declared length over the limit before reading', async () => {
    await expect(readBody(post('x'.repeat(200), { 'content-length': '200' }), 100)).rejects.toMatchObject({
      status: 413,
    });
  });

  it('refuses a body longer than the limit whatever its declared length says', async () => {
    await expect(readBody(post(streamOf('x'.repeat(200)), { 'content-length': '10' }), 100)).rejects.toMatchObject({
      status: 413,
    });
  });

  it('reads a body of unknown length as a stream, and refuses it past the limit', async () => {
    expect(await readBody(post(streamOf('{"a":1}')), 100)).toBe('{"a":1}');
    await expect(readBody(post(streamOf('x'.repeat(200))), 100)).rejects.toMatchObject({ status: 413 });
  });
});
