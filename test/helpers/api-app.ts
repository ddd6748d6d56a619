import type { Hono } from 'hono';
import type { ApiEnv } from '../../runner-core/api/app.js';

/** Where requests to the app seem to come from when a test does not say: a loopback Host, as `wf dev`'s users. */
export const APP_ORIGIN = 'http://127.0.0.1:7766';

/**
 * Calls the runner's API app without a socket. A fetch `Request` carries no Host header (the
 * network layer adds it), and the API's access rules read it: this sets it from the URL unless
 * `init.headers` has one.
 * @example await requestApp(app, '/v1/runs', { headers: { host: 'evil.example' } });
 */
export async function requestApp(app: Hono<ApiEnv>, path: string, init: RequestInit = {}): Promise<Response> {
  const url = new URL(path, APP_ORIGIN);
  const headers = new Headers(init.headers);
  if (!headers.has('host')) headers.set('host', url.host);
  return app.request(new Request(url, { ...init, headers }));
}
