import type { Hono } from 'hono';
import { failureResponse } from '../../api/error-response.js';
import { jsonResponse, readBody } from '../../api/http-io.js';
import type { Logger } from '../../telemetry/logger.js';
import type { QstashWaitStore, Wait } from './waits.js';
import { checkEventId, parseWaitRequest, waitRunId } from './parse.js';
import type { Notified, QstashWaits } from './service.js';
import type { QStashRouteSet } from '../routes/route-set.js';
import { HeaderPrefix } from '../headers.js';

export interface WaitRouteDeps {
  waitStore: QstashWaitStore;
  waits: QstashWaits;
  logger: Logger;
  /** Largest wait request or event body. @default 1 MiB, QStash's message limit */
  bodyLimitBytes?: number;
}

/** `GET /v2/waiters/:eventId` lists at most this many. */
const MAX_LISTED_WAITERS = 1_000;

/** A wait as QStash's `Waiter` (`deadline` in epoch seconds, as QStash returns it). */
export function waiterDto(wait: Wait): Record<string, unknown> {
  return {
    url: wait.url,
    deadline: Math.floor(wait.deadline / 1000),
    headers: wait.headers,
    ...(wait.timeoutUrl !== undefined && { timeoutUrl: wait.timeoutUrl }),
    ...(wait.timeoutBody !== undefined && { timeoutBody: wait.timeoutBody }),
    ...(wait.timeoutHeaders !== undefined && { timeoutHeaders: wait.timeoutHeaders }),
  };
}

/** QStash's `NotifyResponse[]`. */
const notifyDto = (notified: Notified[]): Record<string, unknown>[] =>
  notified.map(({ wait, messageId, error }) => ({ waiter: waiterDto(wait), messageId, error }));

/** The `Upstash-*` headers of the wait request, kept as the waiter's headers. */
function upstashHeaders(headers: Headers): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of headers) if (name.startsWith(HeaderPrefix.Upstash)) (out[name] ??= []).push(value);
  return out;
}

/**
 * `context.waitForEvent`, `notify` and `getWaiters` on the runner: `POST /v2/wait/:eventId`,
 * `POST /v2/notify/:eventId`, `POST /v2/notify/:workflowRunId/:eventId` (with lookback) and
 * `GET /v2/waiters/:eventId`. Mounted on the engine's `/v2` app (paths relative to it), behind its
 * token check; what they do is `QstashWaits`'s (service.ts).
 */
export function mountWaitRoutes(app: Hono, deps: WaitRouteDeps): void {
  const limit = deps.bodyLimitBytes ?? 1024 * 1024;
  const guard =
    (handle: (request: Request, params: Record<string, string>) => Promise<Response>) =>
    async (c: { req: { raw: Request; param(): Record<string, string> } }): Promise<Response> => {
      try {
        return await handle(c.req.raw, c.req.param());
      } catch (error) {
        return failureResponse(error, deps.logger);
      }
    };

  app.post(
    '/wait/:eventId',
    guard(async (request, params) => {
      const eventId = checkEventId(params.eventId ?? '');
      const body = parseWaitRequest(await readBody(request, limit));
      const runId = waitRunId(request.headers, body);
      const wait: Omit<Wait, 'createdAt' | 'deadline'> = {
        runId,
        eventId,
        url: body.url,
        step: body.step,
        timeout: body.timeout,
        headers: upstashHeaders(request.headers),
      };
      if (body.timeoutUrl !== undefined) wait.timeoutUrl = body.timeoutUrl;
      if (body.timeoutBody !== undefined) wait.timeoutBody = body.timeoutBody;
      if (body.timeoutHeaders !== undefined) wait.timeoutHeaders = body.timeoutHeaders;
      return jsonResponse(200, await deps.waits.register(wait, body.timeoutMs));
    }),
  );

  app.post(
    '/notify/:eventId',
    guard(async (request, params) => {
      const eventId = checkEventId(params.eventId ?? '');
      return jsonResponse(200, notifyDto(await deps.waits.notify(eventId, await readBody(request, limit))));
    }),
  );

  app.post(
    '/notify/:workflowRunId/:eventId',
    guard(async (request, params) => {
      const eventId = checkEventId(params.eventId ?? '');
      const runId = checkEventId(params.workflowRunId ?? '', 'a workflow run id');
      return jsonResponse(200, notifyDto(await deps.waits.notifyRun(runId, eventId, await readBody(request, limit))));
    }),
  );

  app.get(
    '/waiters/:eventId',
    guard(async (_request, params) => {
      const eventId = checkEventId(params.eventId ?? '');
      return jsonResponse(200, (await deps.waitStore.listWaits(eventId, MAX_LISTED_WAITERS)).map(waiterDto));
    }),
  );
}

/** The route set `QSTASH_ROUTE_SETS` mounts (routes.ts). */
export const waitRoutes: QStashRouteSet = (app, { engine, logger, maxBodyBytes }) =>
  mountWaitRoutes(app, { waitStore: engine.stores.waits, waits: engine.waits, logger, bodyLimitBytes: maxBodyBytes });
