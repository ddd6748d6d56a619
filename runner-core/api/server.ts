import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { WorkflowError } from '../../protocol/errors.js';
import { parseStartRequest } from '../../protocol/messages.js';
import { expectObject, parseJson } from '../../protocol/validate.js';
import { ApiError, OriginNotAllowedError } from '../errors.js';
import { RUN_ID_PATTERN } from '../ids.js';
import type { Runner } from '../runner.js';
import type { RunStatus } from '../store/types.js';
import { createDashboard } from './dashboard.js';
import { isLoopbackHost, readBody, sendError, sendJson } from './http-io.js';
import { streamEvents } from './sse.js';

export interface ApiOptions {
  /** Address the server is bound to; reads need no token only on loopback. */
  host: string;
  /** Largest request body, in bytes. @default 1 MiB */
  maxBodyBytes?: number;
  /** Folder of the built web dashboard served at `/`. @default the package's dist/web */
  dashboardDir?: string;
  /** `GET /metrics` answers this (Prometheus text); without it there is no /metrics. */
  metrics?: () => Promise<string>;
  /** How long `GET /healthz` waits for the store before answering 503. @default 2000 */
  healthTimeoutMs?: number;
}

const STATUSES: ReadonlySet<string> = new Set<RunStatus>(['queued', 'running', 'sleeping', 'waiting', 'completed', 'failed', 'cancelled']);

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL, params: string[]) => Promise<void> | void;
interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
  /** Reads are open on loopback (the dashboards); anything that changes state needs the token. */
  write: boolean;
  /** Open to everyone: only what the dashboard needs before its login form. */
  public?: boolean;
  /**
   * A write the web dashboard makes (cancel, rerun): on loopback it needs no token when the
   * request comes from the page the runner served itself (same origin, see `fromDashboard`).
   */
  dashboard?: boolean;
}

function hostnameOf(host: string | undefined): string {
  if (!host) return '';
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
}

/**
 * A request the runner's own dashboard page sent: browsers put the page's origin in `Origin` on
 * every POST, so another site (or another local dev server on another port) cannot pass as it,
 * and a rebinding site fails the loopback Host check before this.
 */
function fromDashboard(req: IncomingMessage): boolean {
  return req.headers.origin !== undefined && req.headers.origin === `http://${req.headers.host ?? ''}`;
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

/**
 * The runner's HTTP API:
 * POST /v1/runs · GET /v1/runs · GET /v1/runs/:id · GET /v1/runs/:id/steps · POST /v1/runs/:id/cancel
 * · POST /v1/runs/:id/rerun
 * · GET /v1/events (SSE) · POST /v1/events/:eventId (notify) · GET /v1/session · GET /healthz
 * · GET /metrics (when `metrics` is given), and the web dashboard (dashboard.ts) at `/` and `/runs/…`.
 */
export function createApiServer(runner: Runner, options: ApiOptions): Server {
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const openReads = isLoopbackHost(options.host);
  const dashboard = createDashboard(options.dashboardDir);
  /** Reads need no token: loopback bind and a loopback Host header (see the DNS rebinding note below). */
  const openFor = (req: IncomingMessage): boolean => openReads && isLoopbackHost(hostnameOf(req.headers.host));

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
        sendJson(res, 200, { run, steps, attempts });
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
      handler: (req, res, url) => streamEvents(req, res, runner.events, url.searchParams.get('runId')),
    },
    {
      method: 'POST',
      pattern: /^\/v1\/events\/([^/]+)$/,
      write: true,
      handler: async (req, res, _url, params) => {
        const eventId = decodeURIComponent(params[0] ?? '');
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
      handler: (req, res) => sendJson(res, 200, { needsToken: !openFor(req) }, { 'cache-control': 'no-store' }),
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
    // A read: open on loopback, the token elsewhere (it shows run counts).
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

  return createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://runner');
      const matching = routes.filter((r) => r.pattern.test(url.pathname));
      try {
        if (matching.length === 0 && dashboard(req, res, url.pathname)) return;
        if (matching.length === 0) throw new ApiError(404, 'NOT_FOUND', `No such endpoint: ${req.method} ${url.pathname}.`);
        const route = matching.find((r) => r.method === req.method);
        if (!route) {
          res.setHeader('allow', matching.map((r) => r.method).join(', '));
          throw new ApiError(405, 'METHOD_NOT_ALLOWED', `Expected ${matching.map((r) => r.method).join(' or ')} for ${url.pathname}, got ${req.method}.`);
        }
        // Open reads also need a loopback Host header: a web page that rebinds its own name to
        // 127.0.0.1 (DNS rebinding) sends its name there, and must not read run bodies.
        const open = route.public === true || (openFor(req) && (!route.write || (route.dashboard === true && fromDashboard(req))));
        if (!open && !runner.tokens.check(req.headers.authorization)) {
          throw new ApiError(401, 'UNAUTHORIZED', 'Missing or wrong bearer token: send `Authorization: Bearer <WF_TOKEN>`.');
        }
        await route.handler(req, res, url, route.pattern.exec(url.pathname)!.slice(1));
      } catch (error) {
        if (res.headersSent) return void res.destroy();
        if (error instanceof ApiError) return sendError(res, error);
        if (error instanceof OriginNotAllowedError) return sendError(res, new ApiError(403, 'ORIGIN_NOT_ALLOWED', error.message));
        if (WorkflowError.is(error) && error.code === 'PROTOCOL') return sendError(res, new ApiError(400, 'BAD_REQUEST', error.message));
        console.error('[wfkit] API error:', error);
        sendError(res, new ApiError(500, 'INTERNAL', 'The runner failed to handle this request; its log has the details.'));
      }
    })();
  });
}
