import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../protocol/validate.js';
import { TEST_TOKEN, startTestRunner, type TestRunner } from '../helpers/runner.js';

/**
 * What the runner's HTTP API does with hostile or broken input: malformed request lines and
 * headers sent as raw bytes, targets `new URL` refuses, bad %-escapes, deep JSON, slow clients.
 * Each answers a 4xx with a JSON error, and the server keeps answering afterwards.
 */

let runner: TestRunner | undefined;

afterEach(async () => {
  await runner?.close();
  runner = undefined;
});

interface RawAnswer {
  status: number;
  head: string;
  body: string;
  /** The server closed the connection before the whole answer came, or after it without keep-alive. */
  closed: boolean;
}

/**
 * Sends `bytes` as they are over a new connection; resolves once a whole answer came (with
 * `untilClose`: once the server closed the connection), or when `waitMs` passes.
 */
function sendRaw(bytes: string | Buffer, waitMs = 5_000, untilClose = false): Promise<RawAnswer> {
  const { port } = new URL(runner!.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    const done = (closed: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      const cut = text.indexOf('\r\n\r\n');
      const head = cut === -1 ? text : text.slice(0, cut);
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0),
        head,
        body: cut === -1 ? '' : text.slice(cut + 4),
        closed,
      });
    };
    const timer = setTimeout(() => done(false), waitMs);
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      // A whole answer on a connection kept alive: no need to wait for the close.
      const cut = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, cut))?.[1];
      if (
        !untilClose &&
        cut !== -1 &&
        length !== undefined &&
        Buffer.byteLength(text.slice(cut + 4), 'latin1') >= Number(length)
      )
        done(false);
    });
    socket.on('close', () => done(true));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? done(true) : reject(error)));
    socket.write(bytes);
  });
}

/** The server still serves: a plain request right after gets its normal answer. */
async function expectAlive(): Promise<void> {
  const response = await fetch(`${runner!.url}/healthz`);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ ok: true });
}

function jsonError(answer: RawAnswer): { code: string; message: string } {
  expect(answer.head).toMatch(/content-type: application\/json/i);
  return (JSON.parse(answer.body) as { error: { code: string; message: string } }).error;
}

describe('runner API: malformed requests on the wire', () => {
  it.each([
    ['a target new URL refuses', 400, 'GET //[ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    ['an absolute target new URL refuses', 400, 'GET http://[ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    [
      'an absolute target with a bad port',
      400,
      'GET http://runner:99999999/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
    ],
    [
      'a backslash in the path (the adapter refuses to build a URL of it)',
      400,
      'GET /v1\\runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
    ],
    ['a Host header that is no host', 400, 'GET /healthz HTTP/1.1\r\nHost: [::1\r\n\r\n'],
    [
      'a bad %-escape in an event id',
      400,
      `POST /v1/events/%ZZ HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_TOKEN}\r\nContent-Length: 0\r\n\r\n`,
    ],
    ['a bad %-escape in a run id', 404, 'GET /v1/runs/%ZZ%E0%A4%A HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    ['a NUL byte in the target', 400, 'GET /v1/runs\0x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'],
    ['a header line without a colon', 400, 'GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nthis is not a header\r\n\r\n'],
    ['a space in a header name', 400, 'GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Name: x\r\n\r\n'],
    ['a request line of garbage', 400, '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 hello\r\n\r\n'],
    ['a target over the header size limit', 431, `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`],
    [
      'a header over the size limit',
      431,
      `GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`,
    ],
  ])('answers %s with %i and a JSON error, and keeps serving', async (_name, status, bytes) => {
    runner = await startTestRunner();
    const answer = await sendRaw(Buffer.from(bytes, 'latin1'));
    expect(answer.status, answer.head).toBe(status);
    const error = jsonError(answer);
    expect(error.code).toMatch(/^[A-Z_]+$/);
    expect(error.message.length).toBeGreaterThan(10);
    await expectAlive();
  });

  it('serves an HTTP/1.0 request that sends no Host', async () => {
    runner = await startTestRunner();
    const answer = await sendRaw('GET /healthz HTTP/1.0\r\n\r\n');
    expect(answer.status, answer.head).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ ok: true });
  });

  it('names the unparseable target in its message', async () => {
    runner = await startTestRunner();
    const answer = await sendRaw('GET //[ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(jsonError(answer)).toEqual({
      code: 'BAD_REQUEST',
      message: 'Expected a request target such as /v1/runs, got "//[".',
    });
    await expectAlive();
  });

  it('answers 400 for a bad %-escape in an event id, naming it', async () => {
    runner = await startTestRunner();
    const response = await fetch(`${runner.url}/v1/events/%ZZ`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}` },
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { code: 'BAD_REQUEST', message: 'Expected the event id in the path to be %-encoded UTF-8, got "%ZZ".' },
    });
  });

  it('keeps serving after a burst of malformed requests on many connections', async () => {
    runner = await startTestRunner();
    const lines = [
      'GET //[ HTTP/1.1',
      'GET http://[ HTTP/1.1',
      'POST /v1/events/%ZZ HTTP/1.1',
      'GET /\0 HTTP/1.1',
      'BREW /pot HTCPCP/1.0',
    ];
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        sendRaw(`${lines[i % lines.length]}\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n`),
      ),
    );
    for (const answer of answers) expect(answer.status, answer.head).toBeGreaterThanOrEqual(400);
    for (const answer of answers) expect(answer.status, answer.head).toBeLessThan(500);
    await expectAlive();
  });
});

describe('runner API: slow clients', () => {
  it('closes a connection that trickles its headers, with 408', async () => {
    runner = await startTestRunner({ api: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
    const started = Date.now();
    // Half a request line, then nothing: a slowloris client.
    const answer = await sendRaw('GET /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n', 8_000, true);
    expect(answer.closed).toBe(true);
    expect(answer.status).toBe(408);
    expect(Date.now() - started).toBeLessThan(5_000);
    await expectAlive();
  });

  it('closes a connection whose body never finishes, with 408', async () => {
    runner = await startTestRunner({ api: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });
    const answer = await sendRaw(
      `POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_TOKEN}\r\nContent-Length: 1000\r\n\r\n{"url":`,
      8_000,
      true,
    );
    expect(answer.closed).toBe(true);
    expect(answer.status).toBe(408);
    expect((await runner.store.listRuns({})).runs).toEqual([]);
    await expectAlive();
  });
});

describe('runner API: deep JSON', () => {
  const deep = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);

  it('refuses notify data nested 50,000 levels with 400 naming the limit', async () => {
    runner = await startTestRunner();
    const response = await fetch(`${runner.url}/v1/events/deep`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
      body: `{"data":${deep(50_000)}}`,
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('BAD_REQUEST');
    expect(error.message).toContain(`at most ${MAX_JSON_DEPTH} levels`);
    expect(error.message).toContain('the request body');
    await expectAlive();
  });

  it('refuses a start nested too deeply, and takes notify data at the limit', async () => {
    runner = await startTestRunner();
    const headers = { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' };
    const start = await fetch(`${runner.url}/v1/runs`, {
      method: 'POST',
      headers,
      body: `{"url":"http://127.0.0.1:1/w","x":${deep(MAX_JSON_DEPTH)}}`,
    });
    expect(start.status).toBe(400);
    expect((await runner.store.listRuns({})).runs).toEqual([]);
    // The body object is one level, so the data may nest MAX_JSON_DEPTH - 1 more.
    const ok = await fetch(`${runner.url}/v1/events/at-limit`, {
      method: 'POST',
      headers,
      body: `{"data":${deep(MAX_JSON_DEPTH - 1)}}`,
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ delivered: [] });
  });
});
