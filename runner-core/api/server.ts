import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { WorkflowError } from '../../protocol/errors.js';
import { parseStartRequest } from '../../protocol/messages.js';
import { expectObject, parseJson } from '../../protocol/validate.js';
import { publicStep } from '../call-credentials.js';
import { describeError, type Logger } from '../logger.js';
import { ApiError, OriginNotAllowedError, RunFinishedError, RunNotFoundError } from '../errors.js';
import { RUN_ID_PATTERN } from '../ids.js';
import type { Runner } from '../runner.js';
import type { RunStatus } from '../store/types.js';
import { createAccess, type RouteAccess } from './access.js';
import { limitConnections, timeoutOptions, type ConnectionLimits } from './connection-limits.js';
import { createDashboard } from './dashboard.js';
import { readBody, sendError, sendJson } from './http-io.js';
import { decodeSegment, parseTarget } from './request-target.js';
import { createEventStreams, parseBodiesParam, type EventStreamsOptions } from './sse.js';

export interface ApiOptions extends ConnectionLimits {
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

const STATUSES: ReadonlySet<string> = new Set<RunStatus>(['queued', 'running', 'sleeping', 'waiting', 'completed', 'failed', 'cancelled']);

/** Error codes of WorkflowErrors that are the caller's input, not the runner's failure. */
const BAD_INPUT_CODES: ReadonlySet<string> = new Set(['PROTOCOL', 'SERIALIZATION']);

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL, params: string[]) => Promise<void> | void;
interface Route extends RouteAccess {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

/** Undefined when the store answers a cheap query within `timeoutMs`, else what went wrong. */
async function storeProblem(runner: Runner, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs)));
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

function runIdParam(params: string[]): string {
  let id = params[0] ?? '';
  try {
    id = decodeURIComponent(id);
  } catch {} // malformed %-escapes (`%ZZ`) are not a run id either: 404 below, not a 500
  if (!RUN_ID_PATTERN.test(id)) throw new ApiError(404, 'NOT_FOUND', `No run with id ${id}: run ids look like wfr_ followed by 26 characters.`);
  return id;
}

/** Any failure as the JSON error the client sees; only a failure of the runner itself is a 500. */
function toApiError(error: unknown, logger: Logger): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof OriginNotAllowedError) return new ApiError(403, 'ORIGIN_NOT_ALLOWED', error.message);
  if (error instanceof RunNotFoundError) return new ApiError(404, 'NOT_FOUND', error.message);
  if (error instanceof RunFinishedError) return new ApiError(409, 'FINISHED', error.message);
  if (WorkflowError.is(error) && BAD_INPUT_CODES.has(error.code)) return new ApiError(400, 'BAD_REQUEST', error.message);
  logger.error(`API error: ${describeError(error)}`);
  return new ApiError(500, 'INTERNAL', 'The runner failed to handle this request; its log has the details.');
}

/**
 * The runner's HTTP API:
 * POST /v1/runs · GET /v1/runs · GET /v1/runs/:id · GET /v1/runs/:id/steps · POST /v1/runs/:id/cancel
 * · POST /v1/runs/:id/rerun
 * · GET /v1/events (SSE) · POST /v1/events/:eventId (notify) · GET /v1/session · GET /healthz
 * · GET /metrics (when `metrics` is given), and the web dashboard (dashboard.ts) at `/` and `/runs/…`.
 */
export function createApiServer(runner: Runner, options: ApiOptions): Server {
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const access = createAccess({ host: options.host, openOnLoopback: options.openOnLoopback ?? false });
  const dashboard = createDashboard(options.dashboardDir);
  const streams = createEventStreams(runner.events, options.events);

  const routes: Route[] = [
    {
      method: 'POST',
      pattern: /^\/v1\/runs$/,
      write: true,
      handler: async (req, res) => {
        const start = parseStartRequest(parseJson(await readBody(req, maxBodyBytes), 'the request body'));
        const { run, created } = await runner.startRun(start);
        sendJson(res, created ? 201 : 200, { workflowRunId: run.id });
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/runs$/,
      write: false,
      handler: async (_req, res, url) => {
        const status = url.searchParams.get('status') ?? undefined;
        if (status !== undefined && !STATUSES.has(status)) {
          throw new ApiError(400, 'BAD_REQUEST', `Expected \`status\` to be one of ${[...STATUSES].join(', ')}, got "${status}".`);
        }
        const limitText = url.searchParams.get('limit');
        const limit = limitText === null ? undefined : Number(limitText);
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 500)) {
          throw new ApiError(400, 'BAD_REQUEST', `Expected \`limit\` to be an integer from 1 to 500, got "${limitText}".`);
        }
        const cursor = url.searchParams.get('cursor') ?? undefined;
        sendJson(res, 200, await runner.store.listRuns({ status: status as RunStatus | undefined, cursor, limit }));
      },
    },
    {
      method: 'GET',
      pattern: /^\/v1\/runs\/([^/]+)$/,
      write: false,
      handler: async (_req, res, _url, params) => {
        const id = runIdParam(params);
        const run = await runner.store.getRun(id);
        if (!run) throw new ApiError(404, 'NOT_FOUND', `No run with id ${id}.`);
        const [steps, attempts] = await Promise.all([runner.store.listSteps(id), runner.store.listAttempts(id)]);
        sendJson(res, 200, { run, steps: steps.map(publicStep), attempts });
      },
    },
    {
      // The route fetches committed steps here when they were too large to inline: always authenticated.
      method: 'GET',
      pattern: /^\/v1\/runs\/([^/]+)\/steps$/,
      write: true,
      handler: async (_req, res, _url, params) => {
        const id = runIdParam(params);
        if (!(await runner.store.getRun(id))) throw new ApiError(404, 'NOT_FOUND', `No run with id ${id}.`);
        sendJson(res, 200, { steps: await runner.committedSteps(id) });
      },
    },
    {
      method: 'POST',
      pattern: /^\/v1\/runs\/([^/]+)\/cancel$/,
      write: true,
      dashboard: true,
      handler: async (_req, res, _url, params) => sendJson(res, 200, { run: await runner.cancelRun(runIdParam(params)) }),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/runs\/([^/]+)\/rerun$/,
      write: true,
      dashboard: true,
      handler: async (_req, res, _url, params) => sendJson(res, 201, { run: await runner.rerun(runIdParam(params)) }),
    },
    {
      method: 'GET',
      pattern: /^\/v1\/events$/,
      write: false,
      handler: (req, res, url) => streams.open(req, res, { runId: url.searchParams.get('runId'), bodies: parseBodiesParam(url.searchParams.get('bodies')) }),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/events\/([^/]+)$/,
      write: true,
      handler: async (req, res, _url, params) => {
        const eventId = decodeSegment(params[0] ?? '', 'the event id');
        const text = await readBody(req, maxBodyBytes);
        const body = text.trim() === '' ? {} : expectObject(parseJson(text, 'the request body'), 'the notify body');
        sendJson(res, 200, await runner.notify(eventId, body.data));
      },
    },
    {
      // The dashboard asks whether to show its login form; the answer follows the rule for reads.
      method: 'GET',
      pattern: /^\/v1\/session$/,
      write: false,
      public: true,
      handler: (req, res) => sendJson(res, 200, { needsToken: !access.openReads(req) }, { 'cache-control': 'no-store' }),
    },
    {
      // Public, like /v1/session: load balancers probe it without credentials, and it tells only
      // whether the store answers (a cheap query), 503 when it does not within the timeout.
      method: 'GET',
      pattern: /^\/healthz$/,
      write: false,
      public: true,
      handler: async (_req, res) => {
        const error = await storeProblem(runner, options.healthTimeoutMs ?? 2_000);
        if (error === undefined) return sendJson(res, 200, { ok: true }, { 'cache-control': 'no-store' });
        sendJson(res, 503, { ok: false, error: { code: 'STORE_UNAVAILABLE', message: `The store did not answer: ${error}` } }, { 'cache-control': 'no-store' });
      },
    },
  ];
  const { metrics } = options;
  if (metrics) {
    // A read: open where reads are open, the token elsewhere (it shows run counts).
    routes.push({
      method: 'GET',
      pattern: /^\/metrics$/,
      write: false,
      handler: async (_req, res) => {
        const body = await metrics();
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
        res.end(body);
      },
    });
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const url = parseTarget(req.url);
      const matching = routes.filter((r) => r.pattern.test(url.pathname));
      if (matching.length === 0 && dashboard(req, res, url.pathname)) return;
      if (matching.length === 0) throw new ApiError(404, 'NOT_FOUND', `No such endpoint: ${req.method} ${url.pathname}.`);
      const route = matching.find((r) => r.method === req.method);
      if (!route) {
        res.setHeader('allow', matching.map((r) => r.method).join(', '));
        throw new ApiError(405, 'METHOD_NOT_ALLOWED', `Expected ${matching.map((r) => r.method).join(' or ')} for ${url.pathname}, got ${req.method}.`);
      }
      if (!access.open(route, req) && !runner.tokens.check(req.headers.authorization)) {
        throw new ApiError(401, 'UNAUTHORIZED', 'Missing or wrong bearer token: send `Authorization: Bearer <WF_TOKEN>`.');
      }
      await route.handler(req, res, url, route.pattern.exec(url.pathname)!.slice(1));
    } catch (error) {
      if (res.headersSent) return void res.destroy();
      const apiError = toApiError(error, runner.logger);
      sendError(res, apiError);
    }
  };

  const server = createServer(timeoutOptions(options), (req, res) => {
    // Last resort: nothing a request does may become an unhandled rejection (it would end the process).
    handle(req, res).catch((error: unknown) => {
      runner.logger.error(`API request failed outside its handler: ${describeError(error)}`);
      res.destroy();
    });
  });
  limitConnections(server, options);
  return server;
}
