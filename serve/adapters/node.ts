import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHandler, type ServeOptions, type Workflow } from '../core/handler.js';
import { toRequestOrRefusal } from './shared/node-request.js';

export const framework = 'node';

/**
 * Writes a web Response to node's, flushing each chunk as it comes (outcome lines stream). A
 * request whose body was refused unread (401, 413) closes its connection after the answer: the
 * rest of the body is not worth draining, and the connection could not carry another request before.
 */
async function send(response: Response, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers = Object.fromEntries(response.headers);
  if (!req.complete) headers.connection = 'close';
  res.writeHead(response.status, headers);
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
  options?: ServeOptions<Payload, Env>,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const handle = createHandler(workflow, { ...options, framework });
  return async (req, res) => {
    const request = toRequestOrRefusal(req);
    const response = request instanceof Response ? request : await handle(request);
    await send(response, req, res).catch(() => res.destroy());
  };
}
