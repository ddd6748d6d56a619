import type { Hono } from 'hono';
import type { Commit } from '../driver.js';
import { FINISHED_RUN_STATUSES, type Store } from '../store/types.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import { failureResponse } from '../api/error-response.js';
import { jsonResponse, readBody } from '../api/http-io.js';
import { checkEventId, parseWaitRequest, waitRunId } from './waits-parse.js';
import { waitResultStep, type Wait } from './waits.js';
import { waitEndedChanges, waitStartedChanges } from './waits-steps.js';

/** What ends a wait needs from the engine: deliver one more step of a run to its workflow. */
export interface RunStepAppender {
  /** Appends `stepJson` to the run's steps and delivers it to the workflow URL; resolves the message id. */
  appendRunStep(runId: string, stepJson: string): Promise<string>;
}

export interface WaitRouteDeps {
  store: Pick<Store, 'getRun' | 'qstashWaits'>;
  engine: RunStepAppender;
  /** The runner's commit (group-committed, then announced): the wait's step rows go through it. */
  commit: Commit;
  logger: Logger;
  now?: () => number;
  /** How long a run-targeted notify nobody waits for is kept for the run's next wait. @default 7 days */
  keepMs?: number;
  /** Largest wait request or event body. @default 1 MiB, QStash's message limit */
  bodyLimitBytes?: number;
}

/** `GET /v2/waiters/:eventId` lists at most this many. */
const MAX_LISTED_WAITERS = 1_000;
export const DEFAULT_KEEP_MS = 7 * 86_400_000;

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

function headerLists(headers: Headers): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of headers) if (name.startsWith('upstash-')) (out[name] ??= []).push(value);
  return out;
}

/**
 * `context.waitForEvent`, `notify` and `getWaiters` on the runner: `POST /v2/wait/:eventId`,
 * `POST /v2/notify/:eventId`, `POST /v2/notify/:workflowRunId/:eventId` (with lookback) and
 * `GET /v2/waiters/:eventId`. Mounted on the engine's `/v2` app, behind its token check.
 * A wait's end (an event, or its timeout in `waits-timeouts.ts`) is one more step delivered to the
 * run through the engine.
 */
export function mountWaitRoutes(app: Hono, deps: WaitRouteDeps): void {
  const now = deps.now ?? Date.now;
  const keepMs = deps.keepMs ?? DEFAULT_KEEP_MS;
  const limit = deps.bodyLimitBytes ?? 1024 * 1024;
  const waits = deps.store.qstashWaits;
  const guard =
    (handle: (request: Request, params: Record<string, string>) => Promise<Response>) =>
    async (c: { req: { raw: Request; param(): Record<string, string> } }): Promise<Response> => {
      try {
        return await handle(c.req.raw, c.req.param());
      } catch (error) {
        return failureResponse(error, deps.logger);
      }
    };

  /** Delivers the event to each wait; a run gone or finished meanwhile is that waiter's `error`. */
  const deliver = async (taken: Wait[], data: string): Promise<Record<string, unknown>[]> =>
    Promise.all(
      taken.map(async (wait) => {
        try {
          const messageId = await deps.engine.appendRunStep(wait.runId, JSON.stringify(waitResultStep(wait, { data })));
          await deps.commit(waitEndedChanges(wait, { data }, now()));
          return { waiter: waiterDto(wait), messageId, error: '' };
        } catch (error) {
          deps.logger.warn(`notify ${wait.eventId}: run ${wait.runId} did not take the event: ${(error as Error).message}`);
          return { waiter: waiterDto(wait), messageId: '', error: (error as Error).message };
        }
      }),
    );

  app.post(
    '/v2/wait/:eventId',
    guard(async (request, params) => {
      const eventId = checkEventId(params.eventId ?? '');
      const body = parseWaitRequest(await readBody(request, limit));
      const runId = waitRunId(request.headers, body);
      const run = await deps.store.getRun(runId);
      if (!run) throw new ApiError(404, 'NOT_FOUND', `No workflow run with id ${runId} to wait in.`);
      if (FINISHED_RUN_STATUSES.has(run.status)) throw new ApiError(409, 'FINISHED', `Workflow run ${runId} is already ${run.status}: it cannot wait for ${eventId}.`);
      const at = now();
      const wait: Wait = { runId, eventId, url: body.url, step: body.step, timeout: body.timeout, createdAt: at, deadline: at + body.timeoutMs, headers: headerLists(request.headers) };
      if (body.timeoutUrl !== undefined) wait.timeoutUrl = body.timeoutUrl;
      if (body.timeoutBody !== undefined) wait.timeoutBody = body.timeoutBody;
      if (body.timeoutHeaders !== undefined) wait.timeoutHeaders = body.timeoutHeaders;
      const registered = await waits.register(wait, at);
      if (registered.kind === 'waiting') {
        await deps.commit(waitStartedChanges(wait, at));
        return jsonResponse(200, { waiting: true });
      }
      // A notify for this run came first (lookback): the wait ends at once.
      const messageId = await deps.engine.appendRunStep(runId, JSON.stringify(waitResultStep(wait, { data: registered.data })));
      await deps.commit(waitEndedChanges(wait, { data: registered.data }, at));
      return jsonResponse(200, { waiting: false, messageId });
    }),
  );

  app.post(
    '/v2/notify/:eventId',
    guard(async (request, params) => {
      const eventId = checkEventId(params.eventId ?? '');
      const data = await readBody(request, limit);
      return jsonResponse(200, await deliver(await waits.takeWaits(eventId, now()), data));
    }),
  );

  app.post(
    '/v2/notify/:workflowRunId/:eventId',
    guard(async (request, params) => {
      const eventId = checkEventId(params.eventId ?? '');
      const runId = params.workflowRunId ?? '';
      const data = await readBody(request, limit);
      const at = now();
      const { waits: taken } = await waits.notifyRun(runId, eventId, data, at, at + keepMs);
      return jsonResponse(200, await deliver(taken, data));
    }),
  );

  app.get(
    '/v2/waiters/:eventId',
    guard(async (_request, params) => {
      const eventId = checkEventId(params.eventId ?? '');
      return jsonResponse(200, (await waits.listWaits(eventId, MAX_LISTED_WAITERS)).map(waiterDto));
    }),
  );
}

