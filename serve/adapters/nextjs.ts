import { createHandler, type ServeOptions, type Workflow } from '../core/handler.js';

export const framework = 'nextjs';

/** An App Router route handler: Next passes a `NextRequest`, which is a web `Request`. */
export type RouteHandler = (request: Request) => Promise<Response>;

/**
 * Serve a workflow from a Next.js App Router route (`app/api/workflow/route.ts`).
 * @example export const { POST } = serve<{ text: string }>(async (context) => { … });
 */
export function serve<Payload = unknown, Env = Record<string, unknown>>(
  workflow: Workflow<Payload, Env>,
  options?: ServeOptions<Payload, Env>,
): { POST: RouteHandler } {
  const handle = createHandler(workflow, { ...options, framework });
  return { POST: (request) => handle(request) };
}
