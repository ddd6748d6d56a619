import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { sendResponse } from '../../serve/adapters/shared/node-response.js';
import { startServer, type Endpoint } from '../helpers/endpoint.js';

/**
 * How `wfkit/node` writes a web Response (`serve/adapters/shared/node-response.ts`): a body that
 * is ready goes out with its head in one write (the runner or client wakes once per answer), lines
 * ready together go out together (node corks a response's writes until the turn's promise jobs are
 * done, so the runner reads steps that finished with the terminal line in its chunk and commits them
 * with the end), and a stream with nothing to send yet still gets its head at once (the runner sees
 * the drive accepted while the first step runs).
 */

let endpoint: Endpoint | undefined;
afterEach(async () => {
  await endpoint?.close();
  endpoint = undefined;
});

const encoder = new TextEncoder();

/** Counts every time the socket hands bytes to the OS: _write for one buffer, _writev for a corked batch. */
function countWrites(res: ServerResponse): Promise<number> {
  const socket = res.socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => void>;
  let count = 0;
  for (const name of ['_write', '_writev'] as const) {
    const original = socket[name].bind(socket);
    socket[name] = (...args) => {
      count++;
      original(...args);
    };
  }
  return new Promise((resolve) => res.on('finish', () => resolve(count)));
}

describe('sendResponse', () => {
  it('sends the head and a ready body in one write', async () => {
    let writes!: Promise<number>;
    endpoint = await startServer((req, res) => {
      writes = countWrites(res);
      void sendResponse(Response.json({ workflowRunId: 'wfr_1' }), req, res);
    });
    const response = await fetch(endpoint.url, { method: 'POST' });
    expect(await response.json()).toEqual({ workflowRunId: 'wfr_1' });
    expect(await writes).toBe(1);
  });

  it('sends the lines ready in the same turn in one write, and a later line in its own', async () => {
    let writes!: Promise<number>;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    endpoint = await startServer((req, res) => {
      writes = countWrites(res);
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          for (const line of ['{"t":"step","index":0}\n', '{"t":"step","index":1}\n'])
            controller.enqueue(encoder.encode(line));
          await released;
          controller.enqueue(encoder.encode('{"t":"step","index":2}\n'));
          controller.enqueue(encoder.encode('{"t":"done"}\n'));
          controller.close();
        },
      });
      void sendResponse(new Response(body, { headers: { 'content-type': 'application/x-ndjson' } }), req, res);
    });
    const response = await fetch(endpoint.url, { method: 'POST' });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('"index":1')) text += decoder.decode((await reader.read()).value);
    release();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value);
    expect(text).toBe('{"t":"step","index":0}\n{"t":"step","index":1}\n{"t":"step","index":2}\n{"t":"done"}\n');
    // The head with the first two lines; the last two lines with the end of the body.
    expect(await writes).toBe(2);
  });

  it('sends the head of a stream before its first chunk exists', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    endpoint = await startServer((req, res) => {
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          await released;
          controller.enqueue(encoder.encode('{"t":"done"}\n'));
          controller.close();
        },
      });
      void sendResponse(new Response(body, { headers: { 'content-type': 'application/x-ndjson' } }), req, res);
    });
    // fetch resolves on the head: the body's first line has not been made yet.
    const response = await fetch(endpoint.url, { method: 'POST' });
    expect(response.status).toBe(200);
    release();
    expect(await response.text()).toBe('{"t":"done"}\n');
  });
});
