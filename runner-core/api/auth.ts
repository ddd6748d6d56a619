import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../errors.js';
import type { TokenSet } from '../tokens.js';
import type { Access, RouteAccess } from './access.js';

/**
 * The token check in front of one route: it passes when `access` opens the route to this request
 * (public routes, reads on `wf dev`'s loopback), or when `Authorization` carries a valid token.
 */
export function requireAccess(access: Access, tokens: TokenSet, level: RouteAccess): MiddlewareHandler {
  return async (c, next) => {
    if (!access.open(level, c.req.raw.headers) && !tokens.check(c.req.header('authorization'))) {
      throw new ApiError(
        401,
        'UNAUTHORIZED',
        'Missing or wrong bearer token: send `Authorization: Bearer <WF_TOKEN>`.',
      );
    }
    await next();
  };
}
