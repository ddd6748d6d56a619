import { createHandler, type ServeOptions, type Workflow } from '../core/handler.js';
import type { WorkflowBindings } from './shared/bindings.js';

export type { WorkflowBindings } from './shared/bindings.js';

export const framework = 'cloudflare';

/** The part of a Worker's `ExecutionContext` this adapter uses. */
export interface WorkerContext {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * Serve a workflow as a Worker's `fetch`. Bindings arrive per request; settings read from them are
 * memoized per env object inside `createHandler`, so the handler is still built once.
 * @example export default { fetch: serve<{ text: string }>(async (context) => { … }) };
 */
export function serve<Payload = unknown, Env = WorkflowBindings>(
  workflow: Workflow<Payload, Env>,
  options?: ServeOptions<Payload, Env>,
): (request: Request, env?: Env, ctx?: WorkerContext) => Promise<Response> {
  const handle = createHandler(workflow, { ...options, framework });
  return (request, env, ctx) =>
    handle(request, {
      env: env as Record<string, unknown> | undefined,
      waitUntil: ctx && ((promise) => ctx.waitUntil(promise)),
    });
}
