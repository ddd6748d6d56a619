import type { Context } from 'hono';
import { createHandler, type ServeOptions, type Workflow } from '../core/handler.js';
import type { WorkflowBindings } from './shared/bindings.js';

/** Bindings a Hono app on Workers declares for wfkit (`new Hono<{ Bindings: WorkflowBindings }>()`). */
export type { WorkflowBindings } from './shared/bindings.js';

export const framework = 'hono';

/** `@hono/node-server` puts `{ incoming, outgoing }` in `c.env`: not bindings, and new per request. */
function bindingsOf(env: unknown): Record<string, unknown> | undefined {
  if (typeof env !== 'object' || env === null || 'incoming' in env) return undefined;
  return env as Record<string, unknown>;
}

/**
 * Serve a workflow from a Hono route; variables come from `c.env` (Workers) or `process.env` (Node).
 * @example app.post("/workflow", serve<{ text: string }>(async (context) => { … }));
 */
export function serve<Payload = unknown, Bindings = WorkflowBindings>(
  workflow: Workflow<Payload, Bindings>,
  options?: ServeOptions<Payload, Bindings>,
): (c: Context) => Promise<Response> {
  const handle = createHandler(workflow, { ...options, framework });
  return (c) => handle(c.req.raw, { env: bindingsOf(c.env) });
}
