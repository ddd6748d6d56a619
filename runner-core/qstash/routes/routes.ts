import { Hono } from 'hono';
import { ApiError } from '../../errors.js';
import { failureResponse } from '../../api/error-response.js';
import { jsonResponse, readBody } from '../../api/http-io.js';
import type { QStashEngine } from '../engine.js';
import { asStepRefusal, badRequest } from '../errors.js';
import { parsed, pathDestination, requestHeaders } from './route-input.js';
import { triggerRoutes } from './trigger.js';
import { clientRoutes } from '../client/routes.js';
import { waitRoutes } from '../waits/routes.js';
import { mountWebhookRoutes } from '../waits/webhook-routes.js';
import { dlqRoutes } from '../client/dlq-routes.js';
import type { QStashApp, QStashRouteSet, QStashRoutesOptions } from './route-set.js';
import type { MessageSpec } from '../messages/spec.js';

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

/** Publish, batch, and a run's list and end: what a workflow's steps use. */
export const workflowRoutes: QStashRouteSet = (app, { engine, maxBodyBytes }) => {
  app.post('/publish/*', async (c) => {
    const destination = pathDestination(c, 'publish');
    const body = await readBody(c.req.raw, maxBodyBytes);
    const headers = requestHeaders(c);
    try {
      const [result] = await engine.publish([parsed(destination, headers, body, 'publish')]);
      return jsonResponse(201, result);
    } catch (error) {
      throw asStepRefusal(error, [headers]);
    }
  });

  app.post('/batch', async (c) => {
    const text = await readBody(c.req.raw, maxBodyBytes);
    let entries: unknown;
    try {
      entries = JSON.parse(text);
    } catch {
      throw badRequest(
        'BAD_REQUEST',
        'Expected the batch body to be a JSON array of {destination, headers, body}, got invalid JSON.',
      );
    }
    if (!Array.isArray(entries) || entries.length > MAX_BATCH_MESSAGES) {
      throw badRequest(
        'BAD_REQUEST',
        `Expected the batch body to be a JSON array of at most ${MAX_BATCH_MESSAGES} messages, got ${Array.isArray(entries) ? `${entries.length} messages` : typeof entries}.`,
      );
    }
    const headerSets = entries.flatMap((entry: unknown) => {
      const headers =
        typeof entry === 'object' && entry !== null ? (entry as { headers?: unknown }).headers : undefined;
      return typeof headers === 'object' && headers !== null ? [headers as Record<string, unknown>] : [];
    });
    try {
      return jsonResponse(201, await engine.publish(batchSpecs(entries)));
    } catch (error) {
      throw asStepRefusal(error, headerSets);
    }
  });

  app.get('/workflows/runs/:runId', async (c) => {
    const runId = c.req.param('runId');
    const steps = await engine.runSteps(runId);
    if (!steps)
      throw new ApiError(404, 'NOT_FOUND', `No running workflow run ${runId}: it finished, or never started.`);
    return new Response(steps, { status: 200, headers: { 'content-type': 'application/json' } });
  });

  app.delete('/workflows/runs/:runId', async (c) => {
    const cancel = c.req.query('cancel') === 'true';
    const body = await readBody(c.req.raw, maxBodyBytes);
    await engine.finishRun(c.req.param('runId'), cancel ? { status: 'cancelled' } : { status: 'completed', body });
    return jsonResponse(200, {});
  });
};

/** The batch's entries as message specs; each refusal names its entry. */
function batchSpecs(entries: unknown[]): MessageSpec[] {
  return entries.map((entry: unknown, index) => {
    const where = `batch message ${index}`;
    if (typeof entry !== 'object' || entry === null)
      throw badRequest('BAD_REQUEST', `Expected ${where} to be an object, got ${JSON.stringify(entry)}.`);
    const { destination, headers = {}, body = '', queue } = entry as Record<string, unknown>;
    if (queue !== undefined)
      throw badRequest(
        'UNSUPPORTED',
        `${where}: queues are not supported by this runner (got queue ${JSON.stringify(queue)}).`,
      );
    if (typeof destination !== 'string')
      throw badRequest(
        'BAD_REQUEST',
        `Expected ${where}'s destination to be a URL string, got ${JSON.stringify(destination)}.`,
      );
    if (typeof headers !== 'object' || headers === null || Object.values(headers).some((v) => typeof v !== 'string')) {
      throw badRequest('BAD_REQUEST', `Expected ${where}'s headers to be an object of strings.`);
    }
    // `context.call` hands its body to the batch as given: one that is not a string (Upstash's
    // Vercel AI SDK example passes an object) goes out as its JSON, as from QStash.
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    return parsed(destination, headers as Record<string, string>, text, where);
  });
}

/** Every set of `/v2` routes, in order. Other parts add theirs here. */
export const QSTASH_ROUTE_SETS: QStashRouteSet[] = [workflowRoutes, triggerRoutes, waitRoutes, clientRoutes, dlqRoutes];

/**
 * The `/v2` sub-app. Without an engine (a store other than SQLite or PostgreSQL) every route is a
 * 501 saying so.
 */
export function createQStashApp(
  engine: QStashEngine | undefined,
  options: Omit<QStashRoutesOptions, 'engine'>,
): QStashApp {
  const app = new Hono();
  // Webhook URLs are called by third parties, without the token: the one route before the check.
  if (engine) mountWebhookRoutes(app, { engine, logger: options.logger, maxBodyBytes: options.maxBodyBytes });
  app.use(async (c, next) => {
    if (!options.tokens.check(c.req.header('authorization'))) {
      throw new ApiError(
        401,
        'UNAUTHORIZED',
        "Missing or wrong bearer token: send `Authorization: Bearer <token>` with one of the runner's tokens (the app's QSTASH_TOKEN).",
      );
    }
    if (!engine)
      throw new ApiError(501, 'NOT_AVAILABLE', "The QStash API needs the runner's own SQLite or PostgreSQL store.");
    await next();
  });
  // Bodies up to the engine's message limit (limits.ts), not the runner API's.
  if (engine)
    for (const routes of QSTASH_ROUTE_SETS)
      routes(app, { ...options, engine, maxBodyBytes: engine.limits.maxMessageBytes });
  app.all('*', (c) => {
    throw new ApiError(
      404,
      'UNSUPPORTED',
      `The runner does not serve ${c.req.method} ${new URL(c.req.url).pathname} of the QStash API (it serves what @upstash/workflow uses).`,
    );
  });
  app.onError((error) => failureResponse(error, options.logger));
  return app;
}
