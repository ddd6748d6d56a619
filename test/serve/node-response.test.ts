import { afterEach, describe, expect, it } from 'vitest';
import { sendResponse } from '../../serve/adapters/shared/node-response.js';
import { startServer, type Endpoint } from '../helpers/endpoint.js';

/**
 * How `wfkit/node` writes a web Response (`serve/adapters/shared/node-response.ts`): a body that
 * is ready goes out with its head in one write (the runner or client wakes once per answer), and a
 * stream with nothing to send yet still gets its head at once (the runner sees the drive accepted
 * while the first step runs).
 */

let endpoint: Endpoint | undefined;
afterEach(async () => {
  await endpoint?.close();
  endpoint = undefined;
});

const encoder = new TextEncoder();

describe('sendResponse', () => {
  it('sends the head and a ready body in one write', async () => {
    let counted!: (count: number) => void;
    const writes = new Promise<number>((resolve) => (counted = resolve));
    endpoint = await startServer((req, res) => {
      // Every time the socket hands bytes to the OS: _write for one buffer, _writev for a corked batch.
      const socket = res.socket as unknown as Record<'_write' | '_writev', (...args: unknown[]) => void>;
      let count = 0;
      for (const name of ['_write', '_writev'] as const) {
        const original = socket[name].bind(socket);
        socket[name] = (...args) => {
          count++;
          original(...args);
        };
      }
      res.on('finish', () => counted(count));
      void sendResponse(Response.json({ workflowRunId: 'wfr_1' }), req, res);
    });
    const response = await fetch(endpoint.url, { method: 'POST' });
    expect(await response.json()).toEqual({ workflowRunId: 'wfr_1' });
    expect(await writes).toBe(1);
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
