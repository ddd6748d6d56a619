import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHandler, type ServeOptions, type Workflow } from '../core/handler.js';

export const framework = 'node';

/** Builds a web Request from node's; the body streams through untouched so signatures verify. */
function toRequest(req: IncomingMessage): Request {
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  const url = `${encrypted ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const body = hasBody
    ? new ReadableStream<Uint8Array>({
        start(controller) {
          req.on('data', (chunk: Uint8Array) => controller.enqueue(new Uint8Array(chunk)));
          req.on('end', () => controller.close());
          req.on('error', (error) => controller.error(error));
        },
      })
    : null;
  return new Request(url, { method: req.method, headers, body, duplex: 'half' } as RequestInit);
}

/** Writes a web Response to node's, flushing each chunk as it comes (outcome lines stream). */
async function send(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) return void res.end();
  res.flushHeaders();
  const reader = response.body.getReader();
  res.on('close', () => void reader.cancel().catch(() => {}));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

/**
 * Serve a workflow from plain `node:http` (or Express: mount it before any body parser).
 * @example http.createServer(serve(async (context) => { … })).listen(3000);
 */
export function serve<Payload = unknown, Env = Record<string, unknown>>(
  workflow: Workflow<Payload, Env>,
  options?: ServeOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const handle = createHandler(workflow, { ...options, framework });
  return async (req, res) => {
    let request: Request;
    try {
      request = toRequest(req);
    } catch (error) {
      // node:http accepts targets fetch cannot represent (absolute-form `POST http://…`): refuse, never crash the app.
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'PROTOCOL', message: `Cannot build a request URL from "${req.url}": ${(error as Error).message}` } }));
      return;
    }
    await send(await handle(request), res).catch(() => res.destroy());
  };
}
