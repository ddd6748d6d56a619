import { createHandler, type ServeOptions, type Workflow } from '../core/handler.js';

export const framework = 'svelte';

/**
 * The part of SvelteKit's `RequestEvent` this adapter reads. Structural, so the adapter needs no
 * `@sveltejs/kit` install to type-check, and the returned function is a valid `RequestHandler`.
 */
export interface SvelteRequestEvent {
  request: Request;
  /** `platform.env` holds the bindings on Cloudflare (adapter-cloudflare). */
  platform?: unknown;
}

/**
 * Serve a workflow from a SvelteKit endpoint (`src/routes/api/workflow/+server.ts`).
 * @example
 * import * as env from "$app/env/private";
 * export const POST = serve<{ text: string }>(async (context) => { … }, { env });
 */
export function serve<Payload = unknown, Env = Record<string, unknown>>(
  workflow: Workflow<Payload, Env>,
  options?: ServeOptions<Payload, Env>,
): (event: SvelteRequestEvent) => Promise<Response> {
  const handle = createHandler(workflow, { ...options, framework });
  return ({ request, platform }) =>
    handle(request, { env: (platform as { env?: Record<string, unknown> } | undefined)?.env });
}
