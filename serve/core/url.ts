import { WorkflowError } from '../../protocol/errors.js';
import { hostMatches, isLoopbackHost, parseHostList, parseHostPatterns } from './hosts.js';
import { platformOrigin } from './platform-url.js';

/** The options that say where the route is reachable (a subset of `ServeOptions`). */
export interface UrlOptions {
  /** The route's full public URL. */
  url?: string;
  /** The app's public origin (optionally with a mount prefix), never the route path. */
  baseUrl?: string;
  /** Build the URL from `x-forwarded-proto` / `x-forwarded-host` when nothing else names it. */
  trustForwardedHeaders?: boolean;
  /** When set, the only hosts the request's own (or forwarded) host may be, when nothing above names the URL. */
  allowedHosts?: readonly string[];
}

/** The variables read for the public origin, as found in the host's environment. */
export interface UrlEnv {
  WF_WORKFLOW_URL?: string;
  SERVICE_WORKFLOW_URL?: string;
  /** Comma-separated host patterns, added to the `allowedHosts` option. */
  WF_ALLOWED_HOSTS?: string;
  /** `development` (either one) also lets any loopback request host name the URL past `allowedHosts`. */
  ENVIRONMENT?: string;
  NODE_ENV?: string;
  /** The hosting platform's variables (`VERCEL_URL`, `RENDER_EXTERNAL_URL`, …; see `platform-url.ts`). */
  [platformVariable: string]: string | undefined;
}

/** Development as the starters and `wf dev` say it: ENVIRONMENT or NODE_ENV is `development`. */
export function isDevelopment(env: UrlEnv): boolean {
  return env.ENVIRONMENT === 'development' || env.NODE_ENV === 'development';
}

function parseAbsolute(value: string, name: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {}
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new WorkflowError('CONFIG', `Expected \`${name}\` to be an absolute http(s) URL, got "${value}".`);
  }
  return url;
}

/**
 * Parsed configured bases (`baseUrl`, WF_WORKFLOW_URL…), by name and value: every signed drive
 * resolves the route's identity, and the configuration does not change between requests, so it is
 * parsed once. Only valid values are kept (an invalid one throws every time, as before); the map
 * is bounded in case a host hands over a new env value per request.
 */
const bases = new Map<string, { base: URL; prefix: string }>();
const MAX_BASES = 64;

function configuredBase(value: string, name: string): { base: URL; prefix: string } {
  const key = `${name}\n${value}`;
  let entry = bases.get(key);
  if (!entry) {
    const base = parseAbsolute(value, name);
    entry = { base, prefix: base.pathname.replace(/\/+$/, '') };
    if (bases.size >= MAX_BASES) bases.clear();
    bases.set(key, entry);
  }
  return entry;
}

/** The first value of a comma-separated forwarding header, trimmed; undefined when absent or empty. */
function firstValue(headers: Headers, name: string): string | undefined {
  const value = headers.get(name)?.split(',')[0]?.trim();
  return value ? value : undefined;
}

/**
 * The origin a reverse proxy says the client used. Values that do not make an http(s) origin are
 * ignored rather than refused: they come from the network, and a bad one must not fail the route.
 */
function forwardedOrigin(request: Request, own: URL): string | undefined {
  const proto = firstValue(request.headers, 'x-forwarded-proto')?.toLowerCase();
  const host = firstValue(request.headers, 'x-forwarded-host');
  if (!proto && !host) return undefined;
  const scheme = proto === 'http' || proto === 'https' ? proto : own.protocol.slice(0, -1);
  try {
    const origin = new URL(`${scheme}://${host ?? own.host}`);
    return origin.pathname === '/' && !origin.search && !origin.username ? origin.origin : undefined;
  } catch {
    return undefined;
  }
}

/** The request's host is not in `allowedHosts` / WF_ALLOWED_HOSTS, the app's own optional lock (403). */
export class UntrustedHostError extends WorkflowError {
  override name = 'UntrustedHostError';
  constructor(message: string) {
    super('HOST_NOT_ALLOWED', message);
  }
}

/** Where the route's URL came from, for messages: `WF_WORKFLOW_URL`, `VERCEL_URL (Vercel)`, `the request's Host header`. */
export interface WorkflowTarget {
  url: string;
  source: string;
}

/**
 * The URL the request itself names (its Host, or with `trustForwardedHeaders` the proxy's forwarded
 * host). With `allowedHosts` / WF_ALLOWED_HOSTS set, only a host they list (or, in development, a
 * loopback one) may: the app's optional second lock. The first lock is the runner's: it calls only
 * the origins its operator allowed, whatever a start names (see README, *Security model*).
 */
function ownUrl(request: Request, own: URL, options: UrlOptions, env: UrlEnv): WorkflowTarget {
  const forwarded = options.trustForwardedHeaders ? forwardedOrigin(request, own) : undefined;
  const origin = new URL(forwarded ?? own.origin);
  const header = forwarded ? 'X-Forwarded-Host' : 'Host';
  const target = { url: origin.origin + own.pathname, source: `the request's ${header} header` };
  const allowed = [
    ...parseHostPatterns(options.allowedHosts ?? [], 'allowedHosts'),
    ...parseHostList(env.WF_ALLOWED_HOSTS),
  ];
  if (allowed.length === 0 || hostMatches(origin, allowed) || (isDevelopment(env) && isLoopbackHost(origin)))
    return target;
  throw new UntrustedHostError(
    `This route takes its URL from the request's ${header} header only for the hosts in WF_ALLOWED_HOSTS / the \`allowedHosts\` option, ` +
      `and ${JSON.stringify(origin.host.slice(0, 100))} is not one of them. If it is this app's address, add it there; ` +
      'or set WF_WORKFLOW_URL=https://your-app.example.com (or pass { url } or { baseUrl } to serve()) to name the origin the runner calls.',
  );
}

/**
 * The public URL the runner must call for this route, and what named it; first match wins:
 * 1. the `url` option (the whole URL);
 * 2. the `baseUrl` option + the request's path;
 * 3. `WF_WORKFLOW_URL` (or `SERVICE_WORKFLOW_URL`) + the request's path;
 * 4. the hosting platform's statement of the deployment's origin (`VERCEL_URL`, `DEPLOY_URL`/`URL`
 *    on Netlify, `RENDER_EXTERNAL_URL`, `RAILWAY_PUBLIC_DOMAIN`, `HEROKU_APP_DEFAULT_DOMAIN_NAME`,
 *    `FLY_APP_NAME`; `platform-url.ts`) + the request's path;
 * 5. with `trustForwardedHeaders`, `x-forwarded-proto` / `x-forwarded-host` + the request's path;
 * 6. the request's own URL (without query or hash).
 * 5 and 6 are refused (`UntrustedHostError`) for a host `allowedHosts` / WF_ALLOWED_HOSTS, when set,
 * does not list. A client's Host can name any origin here: the runner calls only the origins its
 * operator allowed, and refuses a start for any other (403 ORIGIN_NOT_ALLOWED, which the route hands on).
 *
 * A base is an origin, optionally with a mount prefix, with or without a trailing slash; it must
 * not contain the route path. Pure: the caller reads the environment.
 *
 * @example resolveWorkflowTarget(request, { baseUrl: 'https://abc.loca.lt' }) // { url: 'https://abc.loca.lt/api/workflow', source: 'baseUrl' }
 */
export function resolveWorkflowTarget(request: Request, options: UrlOptions = {}, env: UrlEnv = {}): WorkflowTarget {
  if (options.url) return { url: configuredBase(options.url, 'url').base.href, source: 'the `url` option' };
  const own = new URL(request.url);
  const named: [string, string | undefined][] = [
    ['baseUrl', options.baseUrl],
    ['WF_WORKFLOW_URL', env.WF_WORKFLOW_URL],
    ['SERVICE_WORKFLOW_URL', env.SERVICE_WORKFLOW_URL],
  ];
  const found = named.find(([, value]) => value);
  if (!found) {
    const platform = platformOrigin(env);
    return platform
      ? { url: platform.origin + own.pathname, source: platform.source }
      : ownUrl(request, own, options, env);
  }
  const [name, value] = found as [string, string];
  const { base, prefix } = configuredBase(value, name);
  if (prefix !== '' && own.pathname !== '/' && prefix.endsWith(own.pathname.replace(/\/+$/, ''))) {
    throw new WorkflowError(
      'CONFIG',
      `\`${name}\` must not contain the route path: got "${value}" for route "${own.pathname}"; use "${base.origin}".`,
    );
  }
  return { url: base.origin + prefix + own.pathname, source: name };
}

/**
 * The public URL the runner must call for this route ({@link resolveWorkflowTarget} without its source).
 * @example resolveWorkflowUrl(request, { baseUrl: 'https://abc.loca.lt' }) // 'https://abc.loca.lt/api/workflow'
 */
export function resolveWorkflowUrl(request: Request, options: UrlOptions = {}, env: UrlEnv = {}): string {
  return resolveWorkflowTarget(request, options, env).url;
}
