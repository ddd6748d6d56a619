import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The page may load its own script and styles and talk to its own origin, nothing else: a step
 * output that smuggled markup into the page still could not run a script or send data away.
 */
export const DASHBOARD_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'";

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The built files, by URL path. Everything else under `/runs` is a route of the page itself. */
const ASSETS: ReadonlySet<string> = new Set(['/app.js', '/styles.css', '/favicon.svg']);

interface Asset {
  body: Buffer;
  etag: string;
  type: string;
}

/**
 * Where the built dashboard is: `dist/web` beside `dist/runner-core` in the package; from the
 * sources (tests), the repository's `dist/web` written by `npm run build`.
 */
export function findDashboardDir(): string | undefined {
  for (const relative of ['../../web/', '../../dist/web/']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'app.js'))) return dir;
  }
  return undefined;
}

/** The file a GET path stands for: `index.html` for `/` and every `/runs…` route, else an asset; undefined when not ours. */
function fileFor(pathname: string): string | undefined {
  if (
    pathname === '/' ||
    pathname === '/index.html' ||
    pathname === '/runs' ||
    pathname.startsWith('/runs/') ||
    pathname === '/schedules'
  )
    return 'index.html';
  return ASSETS.has(pathname) ? pathname.slice(1) : undefined;
}

export type DashboardHandler = (request: Request, pathname: string) => Response | undefined;

/**
 * Serves the web dashboard (`GET`/`HEAD` of `/`, `/runs/…` and the assets) from `dir` (default:
 * {@link findDashboardDir}), each file read once and kept in memory. Answers undefined for any
 * other path, so the API's own 404 applies. The page needs no token: it asks `GET /v1/session`
 * whether to show its login form.
 * @example const response = dashboard(request, '/runs/wfr_…') ?? notFound();
 */
export function createDashboard(dir?: string): DashboardHandler {
  const cache = new Map<string, Asset>();
  const load = (file: string): Asset | undefined => {
    const cached = cache.get(file);
    if (cached) return cached;
    dir ??= findDashboardDir(); // looked up again until found: a build after the start is picked up
    if (!dir || !existsSync(join(dir, file))) return undefined;
    const body = readFileSync(join(dir, file));
    const asset = {
      body,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
      type: CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
    };
    cache.set(file, asset);
    return asset;
  };

  return (request, pathname) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
    const file = fileFor(pathname);
    if (!file) return undefined;
    const head = request.method === 'HEAD';
    const headers: Record<string, string> = {
      'content-security-policy': DASHBOARD_CSP,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    };
    const asset = load(file);
    if (!asset) {
      const text = 'The web dashboard is not built: run `npm run build` (it writes dist/web).\n';
      const length = String(Buffer.byteLength(text));
      return new Response(head ? null : text, {
        status: 503,
        headers: {
          ...headers,
          'content-type': 'text/plain; charset=utf-8',
          'cache-control': 'no-store',
          'content-length': length,
        },
      });
    }
    // The names carry no content hash, so browsers revalidate each time; the ETag makes that a 304.
    Object.assign(headers, { 'content-type': asset.type, 'cache-control': 'no-cache', etag: asset.etag });
    if (request.headers.get('if-none-match') === asset.etag) return new Response(null, { status: 304, headers });
    return new Response(head ? null : new Uint8Array(asset.body), {
      status: 200,
      headers: { ...headers, 'content-length': String(asset.body.length) },
    });
  };
}
