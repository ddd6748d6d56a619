import type { FlowControlOptions } from '../../protocol/flow-control.js';
import { DEFAULT_RUNNER_URL } from '../../api/runner-url.js';
import { WorkflowError } from '../../protocol/errors.js';
import type { StepKind } from '../../protocol/messages.js';
import type { WorkflowContext } from './context.js';
import { parseHostPatterns } from './hosts.js';
import { PLATFORM_URL_VARIABLES } from './platform-url.js';
import { isStandardSchema, type StandardSchemaV1 } from './schema.js';
import type { UrlEnv } from './url.js';

/** What `failureFunction` receives once a run has failed for good. */
export interface FailureFunctionArgs<Payload = any, Env = any> {
  context: Pick<
    WorkflowContext<Payload, Env>,
    'workflowRunId' | 'requestPayload' | 'headers' | 'env' | 'url' | 'trace'
  >;
  /** The error the run failed with (name, message and stack as recorded). */
  error: Error;
  /** The step that failed, when a step did. */
  failedStep?: { index: number; name: string; kind: StepKind };
}

/** Options of `serve()`, shared by every adapter. */
export interface ServeOptions<Payload = any, Env = any> {
  /** Token shared with the runner. @default env WF_TOKEN (or SERVICE_TOKEN) */
  token?: string;
  /** Where the runner listens. @default env WF_RUNNER_URL, else http://127.0.0.1:7766 */
  runnerUrl?: string;
  /** The route's full public URL; wins over everything else. */
  url?: string;
  /**
   * Public origin of the app (no route path; a mount prefix is fine); the request's path is appended.
   * Wins over `WF_WORKFLOW_URL`, so starters pass it only in development, from WF_WORKFLOW_URL when set.
   * @default env WF_WORKFLOW_URL (or SERVICE_WORKFLOW_URL), else the hosting platform's deployment URL
   * (VERCEL_URL, RENDER_EXTERNAL_URL, …), else the request's own URL
   */
  baseUrl?: string;
  /**
   * Behind a reverse proxy that sets them, build the public URL from `x-forwarded-proto` and
   * `x-forwarded-host` (first value of a list) when neither `url`, `baseUrl`, WF_WORKFLOW_URL nor
   * the platform names it. Only for a proxy you control: a client can send these headers too.
   * With `allowedHosts` set, the forwarded host must be one of them.
   * @default false
   */
  trustForwardedHeaders?: boolean;
  /**
   * An optional second lock (the runner's allowed origins are the first): when neither `url`,
   * `baseUrl`, WF_WORKFLOW_URL nor the platform names the public URL, the only hosts the request's
   * own `Host` (or trusted forwarded host) may be: `app.example.com`, `app.example.com:8443`,
   * `*.example.com` (subdomains). Any other host is refused (403 HOST_NOT_ALLOWED) before the runner
   * is asked. In development (ENVIRONMENT or NODE_ENV = `development`) localhost, 127.0.0.0/8 and
   * [::1] pass too. Unset (and WF_ALLOWED_HOSTS unset), any host names the URL.
   * @default env WF_ALLOWED_HOSTS (comma-separated), added to this list
   */
  allowedHosts?: string[];
  /** Variables to read the settings above from, for hosts without `process.env` (SvelteKit's `$env/dynamic/private`). */
  env?: Record<string, string | undefined>;
  /** Retries of a failing step before the run fails. @default 3 */
  retries?: number;
  /** Base delay of the exponential backoff, in ms. @default 1000 */
  retryDelay?: number;
  /** Wall time one drive request may spend before handing back with `continue`, in ms. @default 10000 */
  timeBudgetMs?: number;
  /** Largest start body accepted, in bytes; larger gets 413. @default 1 MiB */
  maxBodyBytes?: number;
  /** Guards the public start path: return false to answer 403. Drive requests are signed instead. */
  authorize?: (request: Request) => boolean | Promise<boolean>;
  /** Called once when a run fails for good (after the retries), e.g. to alert or compensate. */
  failureFunction?: (args: FailureFunctionArgs<Payload, Env>) => unknown;
  /**
   * A Standard Schema v1 validator (zod, valibot, arktype, …) for the start body. A body that fails
   * it gets 400 with the issues and starts no run; the run keeps the validated value, which the
   * workflow sees as `context.requestPayload` (typed from the schema's output).
   * @example serve(async (context) => { context.requestPayload.email }, { schema: z.object({ email: z.string().email() }) })
   */
  schema?: StandardSchemaV1<any, Payload>;
  /**
   * Limits shared by the runs of one key: at most `parallelism` executing at once, at most `rate`
   * started per `period`. Runs over a limit wait, in order. `key` may be a function of the payload.
   * @example flowControl: { key: (p) => `tenant-${p.tenantId}`, parallelism: 5, rate: 10, period: "1m" }
   */
  flowControl?: FlowControlOptions<Payload>;
  /** Set by adapters; shows in errors. */
  framework?: string;
}

export { DEFAULT_RUNNER_URL };
export const DEFAULT_TIME_BUDGET_MS = 10_000;
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Drive bodies carry committed steps; the runner stops inlining them past 1 MiB, so allow headroom. */
export const MAX_DRIVE_BODY_BYTES = 8 * 1024 * 1024;

/** Settings after reading options and the environment. */
export interface ResolvedSettings {
  token: string | undefined;
  runnerUrl: string;
  /** WF_WORKFLOW_URL and its alias, WF_ALLOWED_HOSTS, the mode and the platform's URL variables, as the environment has them (options win). */
  urlEnv: UrlEnv;
  env: Record<string, unknown>;
}

type Env = Record<string, unknown>;

function processEnv(): Env {
  // Edge-safe: `process` may not exist (Workers without nodejs_compat, browsers).
  const p = (globalThis as { process?: { env?: Env } }).process;
  return p?.env ?? {};
}

function pick(sources: Env[], ...names: string[]): string | undefined {
  for (const source of sources) {
    for (const name of names) {
      const value = source[name];
      if (typeof value === 'string' && value !== '') return value;
    }
  }
  return undefined;
}

/**
 * Reads settings from options, then the host's per-request env (Cloudflare bindings, SvelteKit
 * platform env), then `process.env`. Memoized per host env object, so a Worker pays this once.
 */
export function createSettingsResolver(options: ServeOptions): (hostEnv?: Env) => ResolvedSettings {
  const memo = new WeakMap<Env, ResolvedSettings>();
  let withoutHost: ResolvedSettings | undefined;
  const resolve = (hostEnv: Env | undefined): ResolvedSettings => {
    const sources = [options.env ?? {}, hostEnv ?? {}, processEnv()];
    return {
      token: options.token ?? pick(sources, 'WF_TOKEN', 'SERVICE_TOKEN'),
      runnerUrl: (options.runnerUrl ?? pick(sources, 'WF_RUNNER_URL') ?? DEFAULT_RUNNER_URL).replace(/\/+$/, ''),
      urlEnv: {
        WF_WORKFLOW_URL: pick(sources, 'WF_WORKFLOW_URL'),
        SERVICE_WORKFLOW_URL: pick(sources, 'SERVICE_WORKFLOW_URL'),
        WF_ALLOWED_HOSTS: pick(sources, 'WF_ALLOWED_HOSTS'),
        ENVIRONMENT: pick(sources, 'ENVIRONMENT'),
        NODE_ENV: pick(sources, 'NODE_ENV'),
        ...Object.fromEntries(PLATFORM_URL_VARIABLES.map((name) => [name, pick(sources, name)])),
      },
      env: { ...processEnv(), ...hostEnv, ...options.env },
    };
  };
  return (hostEnv) => {
    if (!hostEnv) return (withoutHost ??= resolve(undefined));
    let settings = memo.get(hostEnv);
    if (!settings) memo.set(hostEnv, (settings = resolve(hostEnv)));
    return settings;
  };
}

/** The error for a route without a token: names the variable and where to set it. */
export function missingTokenError(framework: string | undefined): WorkflowError {
  const where =
    framework === 'cloudflare' || framework === 'hono'
      ? '.dev.vars (Workers) or .env'
      : framework === 'svelte' || framework === 'nextjs' || framework === 'h3'
        ? '.env.local'
        : 'the environment or .env';
  return new WorkflowError(
    'CONFIG',
    `WF_TOKEN is not set: add WF_TOKEN=<the runner's token> to ${where}, or pass { token } to serve(). \`wf dev\` prints the token it uses.`,
  );
}

export function validateOptions(options: ServeOptions): void {
  for (const key of ['retries', 'retryDelay', 'timeBudgetMs', 'maxBodyBytes'] as const) {
    const value = options[key];
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) {
      throw new WorkflowError('CONFIG', `Expected \`${key}\` to be a non-negative integer, got ${String(value)}.`);
    }
  }
  if (options.schema !== undefined && !isStandardSchema(options.schema)) {
    throw new WorkflowError(
      'CONFIG',
      'Expected `schema` to be a Standard Schema v1 validator (an object with `~standard.version` 1 and `~standard.validate`), such as a zod or valibot schema.',
    );
  }
  const hosts: unknown = options.allowedHosts;
  if (hosts !== undefined) {
    if (!Array.isArray(hosts) || !hosts.every((h) => typeof h === 'string')) {
      throw new WorkflowError(
        'CONFIG',
        `Expected \`allowedHosts\` to be an array of host strings, got ${JSON.stringify(hosts)}.`,
      );
    }
    parseHostPatterns(hosts, 'allowedHosts');
  }
}
