import { ApiErrorWithHeaders, failureResponse } from '../../api/error-response.js';
import { jsonResponse, readBody } from '../../api/http-io.js';
import { ApiError } from '../../errors.js';
import type { Logger } from '../../telemetry/logger.js';
import { FINISHED_RUN_STATUSES } from '../../store/types.js';
import type { QStashEngine } from '../engine.js';
import type { QStashApp } from '../routes/route-set.js';
import { TooManyKeptEventsError } from './service.js';
import { createdWebhookUrl, HOOKS_PATH, namesAddress, parseHookPath, webhookEventData } from './webhooks.js';

export interface WebhookRouteOptions {
  engine: QStashEngine;
  logger: Logger;
  /** Largest request body a webhook takes (413 past it, read no further). */
  maxBodyBytes: number;
}

/**
 * Calls of one webhook kept for waits to come (the lookback): past this, a call before the next
 * wait is refused 429, so whoever holds the URL cannot fill the store.
 */
export const MAX_KEPT_CALLS = 100;

/** One answer for every URL that is no live webhook: which part was wrong is nobody's business. */
const notFound = (): ApiError =>
  new ApiError(404, 'NOT_FOUND', 'No such webhook: the URL is not one a running workflow made, or its run has ended.');

/**
 * `ANY /v2/workflows/hooks/<userId>/<runId>/<eventId>`: a third party calls a webhook URL
 * (webhooks.ts). The one QStash route without the token: the URL itself is the credential, so it is
 * served only for a URL the run's own `CreateWebhook` step made, while the run is open. Mounted
 * before the `/v2` token check (routes.ts). Bounded body, 4xx for any bad input; the answer says
 * nothing of the run.
 */
export function mountWebhookRoutes(app: QStashApp, { engine, logger, maxBodyBytes }: WebhookRouteOptions): void {
  app.all(`${HOOKS_PATH}*`, async (c) => {
    try {
      const request = c.req.raw;
      const address = parseHookPath(new URL(request.url).pathname.replace(/^\/v2/, ''));
      if (!address) throw notFound();
      const run = await engine.context.store.getRun(address.runId);
      if (run?.protocol !== 'upstash' || FINISHED_RUN_STATUSES.has(run.status)) throw notFound();
      const webhookUrl = createdWebhookUrl(await engine.context.messages.runMessages(run.id), address.eventId);
      if (webhookUrl === undefined || !namesAddress(webhookUrl, address)) throw notFound();
      const body = request.method === 'GET' || request.method === 'HEAD' ? '' : await readBody(request, maxBodyBytes);
      const data = webhookEventData(webhookUrl, request, body);
      await engine.waits.notifyRun(run.id, address.eventId, data, MAX_KEPT_CALLS);
      return jsonResponse(200, {});
    } catch (error) {
      if (!(error instanceof TooManyKeptEventsError)) return failureResponse(error, logger);
      const tooMany = new ApiErrorWithHeaders(429, 'TOO_MANY_REQUESTS', error.message, { 'retry-after': '60' });
      return failureResponse(tooMany, logger);
    }
  });
}
