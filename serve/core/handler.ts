import { WorkflowError } from '../../protocol/errors.js';
import { Header } from '../../protocol/headers.js';
import { checkSignatureClaim, hasSignature, verifyRequest } from '../../protocol/signing.js';
import { parseTraceparent } from '../../protocol/trace-context.js';
import type { Workflow } from './context.js';
import { driveRun } from './drive.js';
import { BodyTooLargeError, errorResponse, readBodyLimited } from './http.js';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_TIME_BUDGET_MS,
  MAX_DRIVE_BODY_BYTES,
  createSettingsResolver,
  missingTokenError,
  validateOptions,
  type ResolvedSettings,
  type ServeOptions,
} from './options.js';
import { startRun } from './start.js';
import { resolveWorkflowTarget, resolveWorkflowUrl, UntrustedHostError } from './url.js';

export type { ServeOptions } from './options.js';
export type { Workflow, WorkflowContext } from './context.js';

/** What a host hands over besides the request: per-request variables, and `waitUntil` where it exists. */
export interface HostContext {
  env?: Record<string, unknown>;
  waitUntil?: (promise: Promise<unknown>) => void;
}

/** The one web-standard handler every adapter wraps. */
export type Handle = (request: Request, host?: HostContext) => Promise<Response>;

function statusOf(error: unknown): number {
  if (error instanceof BodyTooLargeError) return 413;
  if (!WorkflowError.is(error)) return 500;
  switch (error.code) {
    case 'PROTOCOL':
      return 400;
    case 'SIGNATURE':
      return 401;
    case 'LATE':
      return 408;
    case 'HOST_NOT_ALLOWED':
      return 403;
    case 'RUNNER':
      return 502;
    default:
      return 500;
  }
}

/**
 * Builds the route handler once. A POST without a runner signature starts a run; a signed POST
 * drives one. Everything else is answered here, so adapters hold no policy.
 * @example const handle = createHandler(async (context) => { await context.run("a", () => 1); }, {});
 */
export function createHandler(workflow: Workflow<any, any>, options: ServeOptions = {}): Handle {
  validateOptions(options);
  const settingsFor = createSettingsResolver(options);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const timeBudgetMs = options.timeBudgetMs ?? DEFAULT_TIME_BUDGET_MS;

  /**
   * The URL a signed request must have been signed for. A Host outside `allowedHosts` (when set)
   * cannot be checked against: 401 (a relayed drive with a rewritten Host ends here), naming what to configure.
   */
  const identityFor = (request: Request, urlEnv: ResolvedSettings['urlEnv']): string => {
    try {
      return resolveWorkflowUrl(request, options, urlEnv);
    } catch (error) {
      if (!(error instanceof UntrustedHostError)) throw error;
      throw new WorkflowError('SIGNATURE', `Cannot verify this request against this route's URL. ${error.message}`, {
        cause: error,
      });
    }
  };

  return async (request, host) => {
    const response = await answer(request, host);
    // A body refused unread (401, 403, 413, 500): let the host drop the rest instead of holding it.
    if (request.body && !request.bodyUsed) request.body.cancel().catch(() => {});
    return response;
  };

  async function answer(request: Request, host: HostContext | undefined): Promise<Response> {
    if (request.method !== 'POST') {
      return errorResponse(
        405,
        'METHOD_NOT_ALLOWED',
        `Expected POST, got ${request.method}: this route only starts and drives workflow runs.`,
        {
          allow: 'POST',
        },
      );
    }
    try {
      const settings = settingsFor(host?.env);
      if (!settings.token) throw missingTokenError(options.framework);
      // A probe must be signed: an unsigned one is refused (401 below), never taken for a start.
      const probe = request.headers.has(Header.Probe);
      if (probe || hasSignature(request.headers)) {
        // Headers first: a request that only claims a signature is refused before its body is read.
        checkSignatureClaim(request.headers);
        // A probe runs nothing and answers where the runner will call, so a route that cannot place
        // itself says why (403 naming what to set), and `wf dev` may sign over the URL it used.
        const workflowUrl = probe
          ? resolveWorkflowUrl(request, options, settings.urlEnv)
          : identityFor(request, settings.urlEnv);
        const body = await readBodyLimited(request, MAX_DRIVE_BODY_BYTES);
        // A drive: only the route's own identity. A URL built from this request's Host would let a
        // drive signed for another app with the same token through (a relay that rewrites Host).
        const urls = probe ? [workflowUrl, request.url.split(/[?#]/)[0]!] : [workflowUrl];
        const { deadline } = await verifyRequest({ headers: request.headers, body, urls, token: settings.token });
        // `wf dev` checking the route: the token matches (the signature says so); tell it where the runner will call.
        if (probe)
          return Response.json(
            { ok: true, framework: options.framework ?? null, url: workflowUrl },
            { headers: { 'cache-control': 'no-store' } },
          );
        const { runnerUrl, token, env } = settings;
        return await driveRun({
          body,
          workflow,
          workflowUrl,
          runnerUrl,
          token,
          env,
          timeBudgetMs,
          deadline,
          failureFunction: options.failureFunction,
          trace: parseTraceparent(request.headers.get(Header.Traceparent)),
        });
      }
      const target = resolveWorkflowTarget(request, options, settings.urlEnv);
      if (options.authorize && !(await options.authorize(request))) {
        return errorResponse(403, 'FORBIDDEN', 'The `authorize` option of this route refused the request.');
      }
      const body = await readBodyLimited(request, maxBodyBytes);
      const start = {
        request,
        body,
        workflowUrl: target.url,
        urlSource: target.source,
        runnerUrl: settings.runnerUrl,
        token: settings.token,
      };
      return await startRun({
        ...start,
        retries: options.retries,
        retryDelayMs: options.retryDelay,
        schema: options.schema,
        flowControl: options.flowControl,
      });
    } catch (error) {
      const status = statusOf(error);
      // A broken route is the developer's to see in their server log, not only in the response.
      if (status === 500) console.error('[wfkit]', error);
      const code = WorkflowError.is(error) ? error.code : 'INTERNAL';
      return errorResponse(status, code, error instanceof Error ? error.message : String(error));
    }
  }
}
