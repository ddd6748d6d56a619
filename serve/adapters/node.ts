import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHandler, type ServeOptions, type Workflow } from '../core/handler.js';
import { toRequestOrRefusal } from './shared/node-request.js';
import { sendResponse } from './shared/node-response.js';

export const framework = 'node';

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
    await sendResponse(response, req, res).catch(() => res.destroy());
  };
}
