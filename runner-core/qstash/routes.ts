import { Hono, type Context } from 'hono';
import { ApiError } from '../errors.js';
import { failureResponse } from '../api/error-response.js';
import { jsonResponse, readBody } from '../api/http-io.js';
import { QStashHeaderError } from './durations.js';
import type { QStashEngine } from './engine.js';
import { badRequest } from './errors.js';
import { parseMessage, type MessageSpec } from './message-spec.js';
import { clientRoutes } from './client-routes.js';
import { waitRoutes } from './waits-routes.js';
import { mountWebhookRoutes } from './webhook-routes.js';
import { dlqRoutes } from './dlq-routes.js';
import type { QStashApp, QStashRouteSet, QStashRoutesOptions } from './route-set.js';

/**
 * The runner's QStash API (`/v2/…`, the part `@upstash/workflow` and `@upstash/qstash` use),
 * mounted by `createApiApp`. Every route but the webhooks (webhook-routes.ts) needs `Authorization:
 * Bearer <token>` (one of the runner's tokens, as it is or wrapped: the app's QSTASH_TOKEN). Route
 * sets register here (`QSTASH_ROUTE_SETS`); whatever no set serves is a 404 naming the endpoint,
 * never a silent success.
 */

export type { QStashApp, QStashRouteSet, QStashRoutesOptions } from './route-set.js';

/** How many messages one batch may hold. */
export const MAX_BATCH_MESSAGES = 1_000;

/** Reads the `QStashHeaderError`s of parsing into the API's 400. */
function parsed(destination: string, headers: Record<string, string>, body: string, where: string): MessageSpec {
  try {
    return parseMessage(destination, headers, body);
  } catch (error) {
    if (error instanceof QStashHeaderError) throw badRequest(error.message.startsWith('The runner does not support') ? 'UNSUPPORTED' : 'BAD_HEADER', `${where}: ${error.message}`);
    throw error;
  }
}

function requestHeaders(c: Context): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of c.req.raw.headers) out[name] = value;
  return out;
}

/** Publish, batch, and a run's list and end: what a workflow's steps use. */
export const workflowRoutes: QStashRouteSet = (app, { engine, maxBodyBytes }) => {
  app.post('/publish/*', async (c) => {
    // The destination is the rest of the path, as the client wrote it (`/v2/publish/https://app/x?y=1`).
    const url = new URL(c.req.url);
    const destination = decodeURIComponentSafe(url.pathname.slice('/v2/publish/'.length)) + url.search;
    if (/^(queue|topic|url-group)s?\//i.test(destination) || !/^https?:\/\//i.test(destination)) {
      throw badRequest('UNSUPPORTED', `Expected /v2/publish/<http(s) URL>, got /v2/publish/${destination}: topics, URL groups and API destinations are not supported by this runner.`);
    }
    const body = await readBody(c.req.raw, maxBodyBytes);
    const [result] = await engine.publish([parsed(destination, requestHeaders(c), body, 'publish')]);
    return jsonResponse(201, result);
  });

  app.post('/batch', async (c) => {
    const text = await readBody(c.req.raw, maxBodyBytes);
    let entries: unknown;
    try {
      entries = JSON.parse(text);
    } catch {
      throw badRequest('BAD_REQUEST', 'Expected the batch body to be a JSON array of {destination, headers, body}, got invalid JSON.');
    }
    if (!Array.isArray(entries) || entries.length > MAX_BATCH_MESSAGES) {
      throw badRequest('BAD_REQUEST', `Expected the batch body to be a JSON array of at most ${MAX_BATCH_MESSAGES} messages, got ${Array.isArray(entries) ? `${entries.length} messages` : typeof entries}.`);
    }
    const specs = entries.map((entry: unknown, index) => {
      const where = `batch message ${index}`;
      if (typeof entry !== 'object' || entry === null) throw badRequest('BAD_REQUEST', `Expected ${where} to be an object, got ${JSON.stringify(entry)}.`);
      const { destination, headers = {}, body = '', queue } = entry as Record<string, unknown>;
      if (queue !== undefined) throw badRequest('UNSUPPORTED', `${where}: queues are not supported by this runner (got queue ${JSON.stringify(queue)}).`);
      if (typeof destination !== 'string') throw badRequest('BAD_REQUEST', `Expected ${where}'s destination to be a URL string, got ${JSON.stringify(destination)}.`);
      if (typeof headers !== 'object' || headers === null || Object.values(headers).some((v) => typeof v !== 'string')) {
        throw badRequest('BAD_REQUEST', `Expected ${where}'s headers to be an object of strings.`);
      }
      if (typeof body !== 'string') throw badRequest('BAD_REQUEST', `Expected ${where}'s body to be a string, got ${typeof body}.`);
      return parsed(destination, headers as Record<string, string>, body, where);
    });
    return jsonResponse(201, await engine.publish(specs));
  });

  app.get('/workflows/runs/:runId', async (c) => {
    const runId = c.req.param('runId');
    const steps = await engine.runSteps(runId);
    if (!steps) throw new ApiError(404, 'NOT_FOUND', `No running workflow run ${runId}: it finished, or never started.`);
    return jsonResponse(200, steps);
  });

  app.delete('/workflows/runs/:runId', async (c) => {
    const cancel = c.req.query('cancel') === 'true';
    const body = await readBody(c.req.raw, maxBodyBytes);
    await engine.finishRun(c.req.param('runId'), cancel ? { status: 'cancelled' } : { status: 'completed', body });
    return jsonResponse(200, {});
  });
};

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw badRequest('BAD_REQUEST', `Expected a %-encoded destination URL, got a malformed escape in "${text.slice(0, 200)}".`);
  }
}

/** Every set of `/v2` routes, in order. Other parts add theirs here. */
export const QSTASH_ROUTE_SETS: QStashRouteSet[] = [workflowRoutes, waitRoutes, clientRoutes, dlqRoutes];

/**
 * The `/v2` sub-app. Without an engine (a store other than SQLite or PostgreSQL) every route is a
 * 501 saying so.
 */
export function createQStashApp(engine: QStashEngine | undefined, options: Omit<QStashRoutesOptions, 'engine'>): QStashApp {
  const app = new Hono();
  // Webhook URLs are called by third parties, without the token: the one route before the check.
  if (engine) mountWebhookRoutes(app, { engine, logger: options.logger, maxBodyBytes: options.maxBodyBytes });
  app.use(async (c, next) => {
    if (!options.tokens.check(c.req.header('authorization'))) {
      throw new ApiError(401, 'UNAUTHORIZED', 'Missing or wrong bearer token: send `Authorization: Bearer <token>` with one of the runner\'s tokens (the app\'s QSTASH_TOKEN).');
    }
    if (!engine) throw new ApiError(501, 'NOT_AVAILABLE', 'The QStash API needs the runner\'s own SQLite or PostgreSQL store.');
    await next();
  });
  if (engine) for (const routes of QSTASH_ROUTE_SETS) routes(app, { ...options, engine });
  app.all('*', (c) => {
    throw new ApiError(404, 'UNSUPPORTED', `The runner does not serve ${c.req.method} ${new URL(c.req.url).pathname} of the QStash API (it serves what @upstash/workflow uses).`);
  });
  app.onError((error) => failureResponse(error, options.logger));
  return app;
}
