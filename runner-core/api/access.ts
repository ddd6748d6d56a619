import { isLoopbackHost } from './http-io.js';

/** The request headers access looks at (a fetch `Headers`). */
export interface RequestHeaders {
  get(name: string): string | null;
}

/**
 * Who may call a route, one of four levels (no flags to combine):
 * - `'public'`: everyone, no token: only what the dashboard needs before its login form, and `/healthz`.
 * - `'read'`: the token, except where reads are open (`openOnLoopback` on a loopback bind).
 * - `'dashboard-write'`: a write the web dashboard makes (cancel, rerun, resume, bulk, schedule
 *   delete): the token, except where reads are open and the request comes from the page the runner
 *   served itself (same origin, see `fromDashboard`). Only writes on what exists: nothing that makes
 *   the runner send to a new destination or payload (starts, notify, new schedules). README's "What
 *   loopback mode allows" names each such route; test/runner-core/loopback-routes.test.ts keeps the
 *   two equal.
 * - `'token'`: always the token, on loopback too: every other write, and reads a client other than
 *   the dashboards makes (the route's fetch of its committed steps), like the whole QStash API.
 */
export type RouteAccess = 'public' | 'read' | 'dashboard-write' | 'token';

export interface AccessOptions {
  /** Address the server is bound to. */
  host: string;
  /** Reads (and the dashboard's writes) without a token on a loopback bind: `wf dev`'s convenience. */
  openOnLoopback: boolean;
}

export interface Access {
  /** Whether reads need no token for this request: what `GET /v1/session` tells the page. */
  openReads(headers: RequestHeaders): boolean;
  /** Whether a route of this access level may run without checking the token. */
  open(access: RouteAccess, headers: RequestHeaders): boolean;
}

function hostnameOf(host: string | null): string {
  if (!host) return '';
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
}

/**
 * A request the runner's own dashboard page sent: browsers put the page's origin in `Origin` on
 * every POST, so another site (or another local dev server on another port) cannot pass as it,
 * and a rebinding site fails the loopback Host check before this.
 */
function fromDashboard(headers: RequestHeaders): boolean {
  const origin = headers.get('origin');
  return origin !== null && origin === `http://${headers.get('host') ?? ''}`;
}

/**
 * Who may call what without the token. The token is needed everywhere but the public routes,
 * unless `openOnLoopback` is set and the server is bound to loopback (`wf dev`): then reads
 * are open to requests whose Host header is loopback too. A page that rebinds its own name to
 * 127.0.0.1 (DNS rebinding) sends its name there, and must not read run bodies. Behind a reverse
 * proxy that rewrites Host to its upstream (nginx's default) the check cannot tell outsiders
 * from local users, which is why `wf start` leaves this off.
 */
export function createAccess(options: AccessOptions): Access {
  const loopbackBind = options.openOnLoopback && isLoopbackHost(options.host);
  const openReads = (headers: RequestHeaders): boolean =>
    loopbackBind && isLoopbackHost(hostnameOf(headers.get('host')));
  return {
    openReads,
    open: (access, headers) => {
      switch (access) {
        case 'public':
          return true;
        case 'read':
          return openReads(headers);
        case 'dashboard-write':
          return openReads(headers) && fromDashboard(headers);
        case 'token':
          return false;
      }
    },
  };
}
