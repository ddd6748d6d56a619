import type { Hono } from 'hono';
import type { Logger } from '../../telemetry/logger.js';
import type { TokenSet } from '../../tokens.js';
import type { QStashEngine } from '../engine.js';

/** What every set of `/v2` routes is given (routes.ts mounts the sets). */
export interface QStashRoutesOptions {
  engine: QStashEngine;
  tokens: TokenSet;
  logger: Logger;
  maxBodyBytes: number;
}

export type QStashApp = Hono;
/** Adds routes to the `/v2` app (paths relative to it, e.g. `/publish/*`). */
export type QStashRouteSet = (app: QStashApp, options: QStashRoutesOptions) => void;
