import { WorkflowError } from '../../protocol/errors.js';
import { hostMatches, isLoopbackHost, parseHostList, parseHostPatterns } from './hosts.js';

/** The options that say where the route is reachable (a subset of `ServeOptions`). */
export interface UrlOptions {
  /** The route's full public URL. */
  url?: string;
  /** The app's public origin (optionally with a mount prefix), never the route path. */
  baseUrl?: string;
  /** Build the URL from `x-forwarded-proto` / `x-forwarded-host` when nothing else names it. */
  trustForwardedHeaders?: boolean;
  /** Hosts the request's own (or forwarded) host may be, when nothing above names the URL. */
  allowedHosts?: readonly string[];
}

/** The variables read for the public origin, as found in the host's environment. */
export interface UrlEnv {
  WF_WORKFLOW_URL?: string;
  SERVICE_WORKFLOW_URL?: string;
  /** Comma-separated host patterns, added to the `allowedHosts` option. */
  WF_ALLOWED_HOSTS?: string;
  /** `development` (either one) lets a loopback request host name the URL. */
  ENVIRONMENT?: string;
  NODE_ENV?: string;
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

/** The route has no configured URL and the request's host is not one it may take it from. */
export class UntrustedHostError extends WorkflowError {
  override name = 'UntrustedHostError';
  constructor(message: string) {
    super('CONFIG', message);
  }
}

/**
 * The URL the request itself names (its Host, or with `trustForwardedHeaders` the proxy's forwarded
 * host), when it may be trusted: a host in `allowedHosts` / WF_ALLOWED_HOSTS, or a loopback host in
 * development. Otherwise a CONFIG error that says what to set: nobody without a token may choose
 * where the runner sends signed requests.
 */
function ownUrl(request: Request, own: URL, options: UrlOptions, env: UrlEnv): string {
  const forwarded = options.trustForwardedHeaders ? forwardedOrigin(request, own) : undefined;
  const origin = new URL(forwarded ?? own.origin);
  const allowed = [...parseHostPatterns(options.allowedHosts ?? [], 'allowedHosts'), ...parseHostList(env.WF_ALLOWED_HOSTS)];
  if (hostMatches(origin, allowed) || (isDevelopment(env) && isLoopbackHost(origin))) return origin.origin + own.pathname;
  const header = forwarded ? 'X-Forwarded-Host' : 'Host';
  throw new UntrustedHostError(
    `This route does not know its public URL, and does not take it from the request's ${header} header ` +
      `(${JSON.stringify(origin.host.slice(0, 100))}) unless that host is allowed: set WF_WORKFLOW_URL=https://your-app.example.com ` +
      '(the origin the runner calls; or pass { url } or { baseUrl } to serve()), or list the host in WF_ALLOWED_HOSTS / the `allowedHosts` option. ' +
      'In development (ENVIRONMENT=development or NODE_ENV=development) a localhost host is trusted.',
  );
}

/**
 * The public URL the runner must call for this route, first match wins:
 * 1. the `url` option (the whole URL);
 * 2. the `baseUrl` option + the request's path;
 * 3. `WF_WORKFLOW_URL` (or `SERVICE_WORKFLOW_URL`) + the request's path;
 * 4. with `trustForwardedHeaders`, `x-forwarded-proto` / `x-forwarded-host` + the request's path;
 * 5. the request's own URL (without query or hash).
 * 4 and 5 only for a host in `allowedHosts` / WF_ALLOWED_HOSTS, or a loopback host in development;
 * anything else is a CONFIG error naming what to set.
 *
 * A base is an origin, optionally with a mount prefix, with or without a trailing slash; it must
 * not contain the route path. Pure: the caller reads the environment.
 *
 * @example resolveWorkflowUrl(request, { baseUrl: 'https://abc.loca.lt' }) // 'https://abc.loca.lt/api/workflow'
 */
export function resolveWorkflowUrl(request: Request, options: UrlOptions = {}, env: UrlEnv = {}): string {
  if (options.url) return configuredBase(options.url, 'url').base.href;
  const own = new URL(request.url);
  const named: [string, string | undefined][] = [
    ['baseUrl', options.baseUrl],
    ['WF_WORKFLOW_URL', env.WF_WORKFLOW_URL],
    ['SERVICE_WORKFLOW_URL', env.SERVICE_WORKFLOW_URL],
  ];
  const found = named.find(([, value]) => value);
  if (!found) return ownUrl(request, own, options, env);
  const [name, value] = found as [string, string];
  const { base, prefix } = configuredBase(value, name);
  if (prefix !== '' && own.pathname !== '/' && prefix.endsWith(own.pathname.replace(/\/+$/, ''))) {
    throw new WorkflowError('CONFIG', `\`${name}\` must not contain the route path: got "${value}" for route "${own.pathname}"; use "${base.origin}".`);
  }
  return base.origin + prefix + own.pathname;
}
