import { Hono } from 'hono';
import { TrieRouter } from 'hono/router/trie-router';
import { ApiError } from '../errors.js';
import type { Runner } from '../runner.js';
import { createAccess } from './access.js';
import { requireAccess } from './auth.js';
import { createDashboard } from './dashboard.js';
import { ApiErrorWithHeaders, failureResponse } from './error-response.js';
import type { ApiEnv, ApiRoute } from './api-route.js';
import { apiRoutes } from './routes.js';
import { createEventStreams, type EventStreamsOptions } from './sse.js';
import { createQStashApp } from '../qstash/routes/routes.js';

export type { ApiEnv } from './api-route.js';

export interface ApiAppOptions {
  /** Address the server is bound to; reads may be open only on loopback (see `openOnLoopback`). */
  host: string;
  /** Largest request body, in bytes. @default 1 MiB */
  maxBodyBytes?: number;
  /** Folder of the built web dashboard served at `/`. @default the package's dist/web */
  dashboardDir?: string;
  /** `GET /metrics` answers this (Prometheus text); without it there is no /metrics. */
  metrics?: () => Promise<string>;
  /** How long `GET /healthz` waits for the store before answering 503. @default 2000 */
  healthTimeoutMs?: number;
  /**
   * On a loopback bind, reads (and cancel/rerun from the dashboard page) need no token from
   * requests with a loopback Host: `wf dev`'s convenience. Unsafe behind a reverse proxy that
   * rewrites Host. @default false
   */
  openOnLoopback?: boolean;
  /** Limits of `GET /v1/events` subscribers (buffered bytes, how many at once). */
  events?: EventStreamsOptions;
}

/** The methods each API path answers, in route order, for a 405's `Allow` (Hono itself answers those 404). */
function allowedMethods(routes: readonly ApiRoute[]): (path: string) => string[] {
  const router = new TrieRouter<number>();
  // Any method: which ones is the answer.
  for (const [index, route] of routes.entries()) router.add('ALL', route.path, index);
  return (path) => {
    const indexes = router
      .match('GET', path)[0]
      .map(([index]) => index)
      .sort((a, b) => a - b);
    return [...new Set(indexes.map((index) => routes[index]!.method))];
  };
}

function methodNotAllowed(method: string, path: string, allowed: string[]): ApiError {
  return new ApiErrorWithHeaders(
    405,
    'METHOD_NOT_ALLOWED',
    `Expected ${allowed.join(' or ')} for ${path}, got ${method}.`,
    { allow: allowed.join(', ') },
  );
}

/**
 * The runner's HTTP API as a Hono app, callable without a socket (`app.request(...)`):
 * POST /v1/runs · GET /v1/runs · GET /v1/runs/:id · GET /v1/runs/:id/steps · POST /v1/runs/:id/cancel
 * · POST /v1/runs/:id/rerun · GET /v1/events (SSE, node server only) · POST /v1/events/:eventId
 * (notify) · GET /v1/session · GET /healthz · GET /metrics (when `metrics` is given), and the web
 * dashboard (dashboard.ts) at `/` and `/runs/…`. Unknown paths are a JSON 404, wrong methods a
 * JSON 405 with `Allow`, and every failure becomes a status in one place (error-response.ts).
 */
export function createApiApp(runner: Runner, options: ApiAppOptions): Hono<ApiEnv> {
  const access = createAccess({ host: options.host, openOnLoopback: options.openOnLoopback ?? false });
  const dashboard = createDashboard(options.dashboardDir);
  const routes = apiRoutes({
    runner,
    access,
    streams: createEventStreams(runner.events, options.events),
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    healthTimeoutMs: options.healthTimeoutMs ?? 2_000,
    metrics: options.metrics,
  });
  const allowed = allowedMethods(routes);
  const app = new Hono<ApiEnv>();

  // Hono answers HEAD with the GET route; the API's routes answer only the methods they list.
  app.use(async (c, next) => {
    const methods = c.req.method === 'HEAD' ? allowed(c.req.path) : [];
    if (methods.length > 0) throw methodNotAllowed(c.req.method, c.req.path, methods);
    await next();
  });
  for (const route of routes)
    app.on(route.method, route.path, requireAccess(access, runner.tokens, route.access), route.handle);
  // The QStash API for @upstash/workflow apps (runner-core/qstash/): its own token check and errors.
  app.route(
    '/v2',
    createQStashApp(runner.qstash, {
      tokens: runner.tokens,
      logger: runner.logger,
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    }),
  );
  app.get('*', (c) => dashboard(c.req.raw, c.req.path) ?? c.notFound());
  app.notFound((c) => {
    const methods = allowed(c.req.path);
    if (methods.length > 0) return failureResponse(methodNotAllowed(c.req.method, c.req.path, methods), runner.logger);
    return failureResponse(
      new ApiError(404, 'NOT_FOUND', `No such endpoint: ${c.req.method} ${c.req.path}.`),
      runner.logger,
    );
  });
  app.onError((error) => failureResponse(error, runner.logger));
  return app;
}
