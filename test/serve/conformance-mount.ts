import type { ServeOptions, Workflow } from '../../serve/core/handler.js';
import type { Endpoint } from '../helpers/endpoint.js';

/* What the conformance suites (conformance.ts and the parts it runs) are given: one adapter's mount. */

/**
 * A mounted route. With `handle`, the route has no socket: the suite calls it the way hono and h3
 * test their apps (`new Request` → handler → `Response`), and `url` only names it.
 */
export interface Mounted extends Endpoint {
  handle?: (request: Request) => Promise<Response>;
}

/**
 * Starts `workflow` behind one adapter, on a real 127.0.0.1 port or socketless (`handle`); `url` is
 * the route's full URL. The route is built with `options(origin)` once the address is known.
 */
export type Mount = (workflow: Workflow<any, any>, options: (origin: string) => ServeOptions) => Promise<Mounted>;
