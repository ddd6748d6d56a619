import type { Context } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import type { RouteAccess } from './access.js';

/**
 * The shape of one API route, in its own module so that every route table (routes.ts,
 * schedule-routes.ts) imports it from here and none imports another.
 */

/** What the app's handlers see: on the node server, the node request and response (`c.env`). */
export interface ApiEnv {
  Bindings: Partial<HttpBindings>;
}

export interface ApiRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** A Hono path (`/v1/runs/:id`). */
  path: string;
  /** Who may call it (access.ts). */
  access: RouteAccess;
  handle(c: Context<ApiEnv>): Promise<Response> | Response;
}
