import { createHandler, type ServeOptions, type Workflow } from '../core/handler.js';

export const framework = 'solidjs';

/**
 * The part of SolidStart's `APIEvent` (`@solidjs/start/server`) this adapter reads; structural,
 * so it type-checks without SolidStart installed and fits SolidStart 1 and 2 alike.
 */
export interface SolidAPIEvent {
  request: Request;
}

/**
 * Serve a workflow from a SolidStart API route (`src/routes/api/workflow.ts`).
 * @example export const POST = serve<{ text: string }>(async (context) => { … });
 */
export function serve<Payload = unknown, Env = Record<string, unknown>>(
  workflow: Workflow<Payload, Env>,
  options?: ServeOptions<Payload, Env>,
): (event: SolidAPIEvent) => Promise<Response> {
  const handle = createHandler(workflow, { ...options, framework });
  return (event) => handle(event.request);
}
