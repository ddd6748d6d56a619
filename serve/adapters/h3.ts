import type { IncomingMessage } from 'node:http';
import { WorkflowError } from '../../protocol/errors.js';
import { createHandler, type ServeOptions, type Workflow } from '../core/handler.js';
import { toRequestOrRefusal } from './shared/node-request.js';

export const framework = 'h3';

/**
 * The parts of an h3 event this adapter reads, without importing h3: v2 (Nitro 3) has `req`, a web
 * Request; v1 (Nuxt 4, Nitro 2) has `node.req` and sometimes `web.request`. Typed loosely so both
 * majors' events fit. Nitro on Cloudflare puts the bindings in `context.cloudflare.env`.
 */
export interface H3EventLike {
  req?: unknown;
  web?: { request?: Request };
  node?: { req?: unknown };
  context?: object;
}

/** The event's Request; on h3 v1 built from node's, or the 400 answer when its Host or target makes no URL. */
function requestOf(event: H3EventLike): Request | Response {
  if (event.req instanceof Request) return event.req;
  if (event.web?.request) return event.web.request;
  if (event.node?.req) return toRequestOrRefusal(event.node.req as IncomingMessage);
  throw new WorkflowError(
    'CONFIG',
    'Expected an h3 event with `req` (h3 v2) or `node.req` (h3 v1); is this route an h3 event handler?',
  );
}

const bindingsOf = (context: object | undefined): Record<string, unknown> | undefined =>
  (context as { cloudflare?: { env?: Record<string, unknown> } } | undefined)?.cloudflare?.env;

/**
 * Serve a workflow from Nuxt / Nitro / h3 (`server/api/workflow.ts`); h3 v1 and v2.
 * @example export default serve<{ text: string }>(async (context) => { … });
 */
export function serve<Payload = unknown, Env = Record<string, unknown>>(
  workflow: Workflow<Payload, Env>,
  options?: ServeOptions<Payload, Env>,
): (event: H3EventLike) => Promise<Response> {
  const handle = createHandler(workflow, { ...options, framework });
  const handler = async (event: H3EventLike): Promise<Response> => {
    const request = requestOf(event);
    return request instanceof Response ? request : handle(request, { env: bindingsOf(event.context) });
  };
  // What h3 v1 `defineEventHandler` sets; older v1 releases warn about an "implicit event handler" without it. v2 ignores it.
  return Object.assign(handler, { __is_handler__: true as const });
}
