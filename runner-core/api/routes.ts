import type { Context } from 'hono';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { parseBulkRequest } from '../../api/bulk.js';
import { parsePruneRequest } from '../../api/prune.js';
import { parseRunFilterParams } from '../../api/run-query.js';
import { parseStartRequest } from '../../protocol/messages.js';
import { expectObject, parseJson } from '../../protocol/validate.js';
import { ApiError } from '../errors.js';
import { RUN_ID_PATTERN, UPSTASH_RUN_ID_PATTERN } from '../ids.js';
import type { Runner } from '../runner.js';
import type { Access } from './access.js';
import type { ApiEnv, ApiRoute } from './api-route.js';
import { runDto, runPageDto, stepDto } from './dto-map.js';
import { jsonResponse, readBody, sendJson } from './http-io.js';
import { decodeSegment } from './request-target.js';
import { bulkAction } from './bulk.js';
import { scheduleRoutes } from './schedule-routes.js';
import { parseBodiesParam, type EventStreams } from './sse.js';

export interface RouteDeps {
  runner: Runner;
  access: Access;
  streams: EventStreams;
  maxBodyBytes: number;
  healthTimeoutMs: number;
  metrics?: () => Promise<string>;
}

const NO_STORE = { 'cache-control': 'no-store' };

/**
 * Path segment `index` as the client sent it, still %-encoded: Hono's params are decoded
 * leniently (a malformed `%ZZ` passes as is), and these routes name a malformed escape.
 */
function rawSegment(c: Context<ApiEnv>, index: number): string {
  return new URL(c.req.url).pathname.split('/')[index] ?? '';
}

/** The run id of `/v1/runs/:id…`; anything that is not one (malformed escapes too) is a 404. */
function runIdParam(c: Context<ApiEnv>): string {
  let id = rawSegment(c, 3);
  try {
    id = decodeURIComponent(id);
  } catch {} // malformed %-escapes (`%ZZ`) are not a run id either: 404 below, not a 500
  // Runs an @upstash/workflow app started (runner-core/qstash/) keep the SDK's ids: wfr_ + its own characters.
  if (!RUN_ID_PATTERN.test(id) && !UPSTASH_RUN_ID_PATTERN.test(id))
    throw new ApiError(
      404,
      'NOT_FOUND',
      `No run with id ${id}: run ids look like wfr_ followed by 26 characters (or an @upstash/workflow run id).`,
    );
  return id;
}

/** Undefined when the store answers a cheap query within `timeoutMs`, else what went wrong. */
async function storeProblem(runner: Runner, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>(
    (resolve) => (timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs)),
  );
  const check = runner.store.nextDueAt().then(
    () => undefined,
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
  try {
    return await Promise.race([check, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The API's routes, in the order a 405's `Allow` lists them. Each says who may call it
 * (`access.ts`); the app puts the token check in front and turns what they throw into statuses.
 */
export function apiRoutes({ runner, access, streams, maxBodyBytes, healthTimeoutMs, metrics }: RouteDeps): ApiRoute[] {
  const routes: ApiRoute[] = [
    {
      method: 'POST',
      path: '/v1/runs',
      access: 'token',
      handle: async (c) => {
        const start = parseStartRequest(parseJson(await readBody(c.req.raw, maxBodyBytes), 'the request body'));
        const { run, created } = await runner.startRun(start);
        return sendJson(c.env?.outgoing, created ? 201 : 200, { workflowRunId: run.id });
      },
    },
    {
      method: 'GET',
      path: '/v1/runs',
      access: 'read',
      handle: async (c) => {
        // Filters (status, url, urlPrefix, createdAfter/Before, failedStep, idPrefix): a ProtocolError
        // naming the parameter on bad input, which error-response.ts answers 400.
        const filter = parseRunFilterParams(new URL(c.req.url).searchParams);
        const limitText = c.req.query('limit');
        const limit = limitText === undefined ? undefined : Number(limitText);
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 500)) {
          throw new ApiError(
            400,
            'BAD_REQUEST',
            `Expected \`limit\` to be an integer from 1 to 500, got "${limitText}".`,
          );
        }
        const cursor = c.req.query('cursor');
        const scheduleId = c.req.query('scheduleId');
        if (scheduleId !== undefined)
          return jsonResponse(
            200,
            runPageDto(await runner.store.schedules.listScheduleRuns(scheduleId, { cursor, limit })),
          );
        const page = await runner.store.listRuns({ ...filter, cursor, limit });
        return jsonResponse(200, runPageDto({ ...page, runs: page.runs.map((run) => runner.withWaitingReason(run)) }));
      },
    },
    {
      method: 'GET',
      path: '/v1/runs/:id',
      access: 'read',
      handle: async (c) => {
        const id = runIdParam(c);
        const run = await runner.store.getRun(id);
        if (!run) throw new ApiError(404, 'NOT_FOUND', `No run with id ${id}.`);
        const [steps, attempts, logs] = await Promise.all([
          runner.store.listSteps(id),
          runner.store.listAttempts(id),
          runner.store.listStepLogs(id),
        ]);
        // A run deferred for want of a slot at its destination says so (the runner's memory, egress/).
        return jsonResponse(200, {
          run: runDto(runner.withWaitingReason(run)),
          steps: steps.map(stepDto),
          attempts,
          logs,
        });
      },
    },
    {
      // The route fetches committed steps here when they were too large to inline: always authenticated.
      method: 'GET',
      path: '/v1/runs/:id/steps',
      access: 'token',
      handle: async (c) => {
        const id = runIdParam(c);
        if (!(await runner.store.getRun(id))) throw new ApiError(404, 'NOT_FOUND', `No run with id ${id}.`);
        return jsonResponse(200, { steps: await runner.committedSteps(id) });
      },
    },
    {
      method: 'POST',
      path: '/v1/runs/:id/cancel',
      access: 'dashboard-write',
      handle: async (c) => jsonResponse(200, { run: runDto(await runner.cancelRun(runIdParam(c))) }),
    },
    {
      method: 'POST',
      path: '/v1/runs/:id/rerun',
      access: 'dashboard-write',
      handle: async (c) => jsonResponse(201, { run: runDto(await runner.rerun(runIdParam(c))) }),
    },
    {
      method: 'POST',
      path: '/v1/runs/:id/resume',
      access: 'dashboard-write',
      handle: async (c) => jsonResponse(200, { run: runDto(await runner.resumeRun(runIdParam(c))) }),
    },
    {
      method: 'POST',
      path: '/v1/runs/bulk',
      access: 'dashboard-write',
      handle: async (c) =>
        jsonResponse(
          200,
          await bulkAction(
            runner,
            parseBulkRequest(parseJson(await readBody(c.req.raw, maxBodyBytes), 'the request body')),
          ),
        ),
    },
    {
      // Retention on demand (`wf prune`): at most `maxRuns` runs a call, then a cursor to go on from.
      method: 'POST',
      path: '/v1/prune',
      access: 'token',
      handle: async (c) =>
        jsonResponse(
          200,
          await runner.retention.prune(
            parsePruneRequest(parseJson(await readBody(c.req.raw, maxBodyBytes), 'the request body')),
          ),
        ),
    },
    {
      method: 'GET',
      path: '/v1/store',
      access: 'read',
      handle: async () =>
        jsonResponse(
          200,
          { sizeBytes: await runner.store.retention.sizeBytes(), retentionMs: runner.retention.retentionMs },
          NO_STORE,
        ),
    },
    {
      method: 'GET',
      path: '/v1/events',
      access: 'read',
      handle: (c) => {
        const request = {
          runId: c.req.query('runId') ?? null,
          bodies: parseBodiesParam(c.req.query('bodies') ?? null),
          lastEventId: c.req.header('last-event-id'),
        };
        const outgoing = c.env?.outgoing;
        // Written to the node response itself, where its unread bytes can be counted (sse.ts).
        if (!outgoing)
          throw new Error(
            'GET /v1/events needs the node server (createApiServer): the app was called without a node response in c.env.',
          );
        streams.open(outgoing, request);
        return RESPONSE_ALREADY_SENT;
      },
    },
    {
      method: 'POST',
      path: '/v1/events/:eventId',
      access: 'token',
      handle: async (c) => {
        const eventId = decodeSegment(rawSegment(c, 3), 'the event id');
        const text = await readBody(c.req.raw, maxBodyBytes);
        const body = text.trim() === '' ? {} : expectObject(parseJson(text, 'the request body'), 'the notify body');
        return jsonResponse(200, await runner.notify(eventId, body.data));
      },
    },
    {
      // The dashboard asks whether to show its login form; the answer follows the rule for reads.
      method: 'GET',
      path: '/v1/session',
      access: 'public',
      handle: (c) => jsonResponse(200, { needsToken: !access.openReads(c.req.raw.headers) }, NO_STORE),
    },
    {
      // Public, like /v1/session: load balancers probe it without credentials, and it tells only
      // whether the store answers (a cheap query), 503 when it does not within the timeout.
      method: 'GET',
      path: '/healthz',
      access: 'public',
      handle: async () => {
        const error = await storeProblem(runner, healthTimeoutMs);
        if (error === undefined) return jsonResponse(200, { ok: true }, NO_STORE);
        return jsonResponse(
          503,
          { ok: false, error: { code: 'STORE_UNAVAILABLE', message: `The store did not answer: ${error}` } },
          NO_STORE,
        );
      },
    },
    ...scheduleRoutes(runner, maxBodyBytes),
  ];
  if (metrics) {
    // A read: open where reads are open, the token elsewhere (it shows run counts).
    routes.push({
      method: 'GET',
      path: '/metrics',
      access: 'read',
      handle: async () =>
        new Response(await metrics(), {
          headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', ...NO_STORE },
        }),
    });
  }
  return routes;
}
