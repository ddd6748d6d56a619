import type { IncomingMessage, ServerResponse } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { serve as h3Serve } from '../../serve/adapters/h3.js';
import { serve as nodeServe } from '../../serve/adapters/node.js';
import { DEFAULT_MAX_BODY_BYTES } from '../../serve/core/options.js';
import { fakeRunner, startServerFor, writeResponse, type Endpoint, type FakeRunner } from '../helpers/endpoint.js';
import { answerBody, rawConnect, sendUntilAnswered } from '../helpers/raw-http.js';

/**
 * The node:http bridge (`serve/adapters/shared/node-request.ts`, used by `wfkit/node` and h3 v1)
 * against what a socket can send and fetch cannot: bodies over the limit, chunked or declared, a
 * Host that makes no URL, a body that stalls. The app must answer with JSON and keep serving;
 * an exception thrown from a stream listener would reach `uncaughtException` and kill a real app.
 */

// A forced collection is what let an unread Request's body be cancelled under the old bridge.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const ROUTE = '/api/workflow';
type Listener = (req: IncomingMessage, res: ServerResponse) => void;

const mounts: Record<string, (origin: string, runner: FakeRunner) => Listener> = {
  node: (origin, runner) => nodeServe(async () => 1, { token: runner.token, runnerUrl: runner.url, baseUrl: origin }),
  'h3 v1': (origin, runner) => {
    const handler = h3Serve(async () => 1, { token: runner.token, runnerUrl: runner.url, baseUrl: origin });
    return (req, res) => void handler({ node: { req }, context: {} }).then((response) => writeResponse(response, res));
  },
};

const crashes: unknown[] = [];
const record = (error: unknown): void => void crashes.push(error);
beforeAll(() => {
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
});
afterAll(() => {
  process.off('uncaughtException', record);
  process.off('unhandledRejection', record);
});

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe.each(Object.keys(mounts))('node request bridge: %s', (name) => {
  let runner: FakeRunner;
  let app: Endpoint;
  let url: string;

  beforeAll(async () => {
    runner = await fakeRunner();
    app = await startServerFor((origin) => mounts[name]!(origin, runner));
    url = app.url + ROUTE;
  });
  afterAll(async () => {
    await app.close();
    await runner.close();
  });
  afterEach(async () => {
    // Collect and give finalizers a few turns: a late enqueue would throw now, and be recorded.
    for (let i = 0; i < 3; i++) {
      gc();
      await turn();
    }
    expect(crashes).toEqual([]);
    // …and the app still serves.
    expect((await fetch(url, { method: 'POST', body: '{"text":"next"}' })).status).toBe(200);
  });

  const errorOf = (text: string) => JSON.parse(answerBody(text)) as { error: { code: string; message: string } };

  it('answers 413 to a chunked body over the limit, reading not much past it', async () => {
    const head = `POST ${ROUTE} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const answer = await sendUntilAnswered(url, head, { chunked: true, limit: 16 * DEFAULT_MAX_BODY_BYTES });
    answer.socket.destroy();
    expect(answer.status).toBe(413);
    expect(errorOf(answer.text).error.message).toContain(`larger than the limit of ${DEFAULT_MAX_BODY_BYTES} bytes`);
    expect(answer.written).toBeLessThan(8 * DEFAULT_MAX_BODY_BYTES);
  });

  it('answers 413 to a declared Content-Length over the limit, and survives the rest arriving after a collection', async () => {
    const head = `POST ${ROUTE} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nContent-Type: application/json\r\nContent-Length: ${1024 ** 3}\r\n\r\n`;
    const answer = await sendUntilAnswered(url, head, { limit: 1024 * 1024 });
    expect(answer.status).toBe(413);
    // The unread Request is garbage now; more body arrives after it was collected.
    gc();
    await turn();
    for (let i = 0; i < 16 && !answer.socket.destroyed; i++) {
      answer.socket.write(Buffer.alloc(64 * 1024, 'a'));
      gc();
      await turn();
    }
    answer.socket.destroy();
  });

  it.each([
    ['[', 'a bracket'],
    ['app.example.com/evil?', 'a path'],
    ['app.example.com:99999', 'a port past 65535'],
  ])('answers 400 JSON to the Host %j (%s)', async (host) => {
    const head = `POST ${ROUTE} HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`;
    const answer = await sendUntilAnswered(url, head, { limit: 0 });
    answer.socket.destroy();
    expect(answer.status).toBe(400);
    expect(errorOf(answer.text).error.code).toBe('PROTOCOL');
  });

  // (CONNECT never reaches a request listener, and node's parser refuses TRACK itself.)
  it('answers 405 JSON to TRACE, a method node:http takes and fetch refuses', async () => {
    const head = `TRACE ${ROUTE} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`;
    const answer = await sendUntilAnswered(url, head, { limit: 0 });
    answer.socket.destroy();
    expect(answer.status).toBe(405);
    expect(answer.text.toLowerCase()).toContain('allow: post');
    expect(errorOf(answer.text).error.code).toBe('METHOD_NOT_ALLOWED');
  });

  it('after a 413 for a body sent whole, drops the rest: the connection closes (node) or carries the next request (h3 v1)', async () => {
    const socket = await rawConnect(url);
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    const chunk = Buffer.alloc(64 * 1024, 'a');
    socket.write(`POST ${ROUTE} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nTransfer-Encoding: chunked\r\n\r\n`);
    for (let sent = 0; sent <= 2 * DEFAULT_MAX_BODY_BYTES && !socket.destroyed; sent += chunk.length) {
      socket.write(`${chunk.length.toString(16)}\r\n`);
      socket.write(chunk);
      if (!socket.write('\r\n'))
        await new Promise((resolve) => (socket.once('drain', resolve), socket.once('close', resolve)));
    }
    socket.write('0\r\n\r\n');
    await vi.waitFor(() => expect(text).toMatch(/^HTTP\/1\.1 413 [\s\S]*\r\n0\r\n\r\n$/), { timeout: 10_000 });
    if (name === 'node') {
      expect(text.toLowerCase()).toContain('connection: close');
      await closed;
      return;
    }
    text = '';
    socket.write(`GET ${ROUTE} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nConnection: close\r\n\r\n`);
    await closed;
    expect(text).toMatch(/^HTTP\/1\.1 405 /);
  });

  it('keeps serving while a body stalls, and survives its client leaving', async () => {
    const stalled = await rawConnect(url);
    stalled.write(
      `POST ${ROUTE} HTTP/1.1\r\nHost: ${new URL(url).host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"text":`,
    );
    // The stalled request holds its own connection only.
    expect((await fetch(url, { method: 'POST', body: '{"text":"meanwhile"}' })).status).toBe(200);
    const closed = new Promise((resolve) => stalled.once('close', resolve));
    stalled.destroy();
    await closed;
  });
});
