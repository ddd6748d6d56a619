import { WorkflowError } from '../../protocol/errors.js';

/**
 * The hosting platform's own statement of the deployment's public origin, read from the variables
 * the platform sets on the app (never from a request, so no client chooses it). Where a platform
 * has both, the immutable per-deployment address comes first: a run's drives keep going to the
 * deployment that started it, whose code they replay, even after a newer one takes the main domain.
 *
 * Platforms that route by host at their edge (Cloudflare Workers and Pages, Deno Deploy, Cloud Run)
 * need no variable: the request's own URL is their statement, and the route falls back to it.
 */

type Env = Readonly<Record<string, string | undefined>>;

interface PlatformRule {
  /** Named in errors and in the resolved URL's source. */
  platform: string;
  /** The variable read; a bare host gets `https://`, a full URL is taken as it is. */
  variable: string;
  /** Reads the origin's text from the variable, when this platform applies. */
  read(env: Env): string | undefined;
}

const value = (env: Env, name: string): string | undefined => (env[name] ? env[name] : undefined);

/** Netlify's `URL` is too common a name to read alone: only with a variable only Netlify sets. */
const onNetlify = (env: Env): boolean => env.NETLIFY === 'true' || value(env, 'SITE_ID') !== undefined;

/** `vercel dev` sets `VERCEL_URL` to the local server; development has its own rules (`baseUrl`). */
const onVercel = (env: Env): boolean => env.VERCEL_ENV !== 'development';

/** In order: the first rule whose variable is set wins. */
const RULES: readonly PlatformRule[] = [
  // Vercel: the deployment's own `*.vercel.app` host; the branch and production domains move on.
  { platform: 'Vercel', variable: 'VERCEL_URL', read: (env) => (onVercel(env) ? value(env, 'VERCEL_URL') : undefined) },
  {
    platform: 'Vercel',
    variable: 'VERCEL_BRANCH_URL',
    read: (env) => (onVercel(env) ? value(env, 'VERCEL_BRANCH_URL') : undefined),
  },
  {
    platform: 'Vercel',
    variable: 'VERCEL_PROJECT_PRODUCTION_URL',
    read: (env) => (onVercel(env) ? value(env, 'VERCEL_PROJECT_PRODUCTION_URL') : undefined),
  },
  // Netlify: the deploy's own URL where it reached the runtime, else the site's main address
  // (functions get only URL, SITE_NAME and SITE_ID at run time).
  {
    platform: 'Netlify',
    variable: 'DEPLOY_URL',
    read: (env) => (onNetlify(env) ? value(env, 'DEPLOY_URL') : undefined),
  },
  { platform: 'Netlify', variable: 'URL', read: (env) => (onNetlify(env) ? value(env, 'URL') : undefined) },
  { platform: 'Render', variable: 'RENDER_EXTERNAL_URL', read: (env) => value(env, 'RENDER_EXTERNAL_URL') },
  { platform: 'Railway', variable: 'RAILWAY_PUBLIC_DOMAIN', read: (env) => value(env, 'RAILWAY_PUBLIC_DOMAIN') },
  {
    platform: 'Heroku',
    variable: 'HEROKU_APP_DEFAULT_DOMAIN_NAME',
    read: (env) => value(env, 'HEROKU_APP_DEFAULT_DOMAIN_NAME'),
  },
  // Fly.io names the app, and every app with a public service answers at <name>.fly.dev.
  {
    platform: 'Fly.io',
    variable: 'FLY_APP_NAME',
    read: (env) => (value(env, 'FLY_APP_NAME') ? `${env.FLY_APP_NAME}.fly.dev` : undefined),
  },
];

/** Every variable a rule reads, so the settings resolver picks them from the host's environment. */
export const PLATFORM_URL_VARIABLES: readonly string[] = [
  ...new Set([...RULES.map((rule) => rule.variable), 'VERCEL_ENV', 'NETLIFY', 'SITE_ID']),
];

export interface PlatformOrigin {
  /** `https://host[:port]`, no path. */
  origin: string;
  /** What stated it, for messages: `VERCEL_URL (Vercel)`. */
  source: string;
}

/**
 * The deployment's public origin as its platform states it, or undefined off those platforms.
 * A value that is no http(s) origin is a CONFIG error naming the variable (and how to override it).
 * @example platformOrigin({ VERCEL_URL: 'app-abc123.vercel.app' }) // { origin: 'https://app-abc123.vercel.app', source: 'VERCEL_URL (Vercel)' }
 */
export function platformOrigin(env: Env): PlatformOrigin | undefined {
  for (const rule of RULES) {
    const text = rule.read(env)?.trim();
    if (!text) continue;
    const source = `${rule.variable} (${rule.platform})`;
    return { origin: parseOrigin(/^https?:\/\//i.test(text) ? text : `https://${text}`, source, text), source };
  }
  return undefined;
}

function parseOrigin(candidate: string, source: string, raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(candidate);
  } catch {}
  if (!url || url.username || url.password || url.search || url.hash || url.pathname.replace(/\/+$/, '') !== '') {
    throw new WorkflowError(
      'CONFIG',
      `Expected ${source} to be a host or an http(s) origin, got ${JSON.stringify(raw.slice(0, 200))}; set WF_WORKFLOW_URL=https://your-app.example.com to name the route's origin instead.`,
    );
  }
  return url.origin;
}
