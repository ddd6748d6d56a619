import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHandler, type ServeOptions, type Workflow } from '../core/handler.js';
import { toRequest } from './shared/node-request.js';

export const framework = 'node';

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
