import { createServer, type Server, type ServerResponse } from 'node:http';
import { getRequestListener, RequestError } from '@hono/node-server';
import { ApiError } from '../errors.js';
import { describeError } from '../telemetry/logger.js';
import type { Runner } from '../runner.js';
import { createApiApp, type ApiAppOptions } from './app.js';
import { limitConnections, timeoutOptions, type ConnectionLimits } from './connection-limits.js';
import { failureResponse, toApiError } from './error-response.js';
import { parseTarget } from './request-target.js';

export interface ApiOptions extends ApiAppOptions, ConnectionLimits {
  /**
   * The process is the runner's own (`wf start`): the node adapter may replace the global `Request`
   * and `Response` with its lightweight ones, which answer a string body straight onto the socket
   * instead of through a `Response` of Node's undici and a web stream read back from it (each API
   * answer's garbage: about 8 MB of `wf start`'s peak with 1,000 runs started, and CPU). A library
   * host's globals stay its own. @default false
   */
  ownsGlobals?: boolean;
}

/** Host of the URL built for a request that sent none (HTTP/1.0); access.ts reads the header itself. */
const DEFAULT_HOSTNAME = 'runner';

/** Writes an API error on the node response: for requests refused before they reach the app. */
function sendError(res: ServerResponse, error: ApiError): void {
  const body = JSON.stringify({ error: { code: error.code, message: error.message } });
  res.writeHead(error.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

/**
 * The runner's HTTP API ({@link createApiApp}) on a node:http server: the app served through
 * `@hono/node-server`, with the connection limits (timeouts, the JSON answer to a request Node
 * cannot parse, the connection cap) of connection-limits.ts.
 */
export function createApiServer(runner: Runner, options: ApiOptions): Server {
  const app = createApiApp(runner, options);
  const listener = getRequestListener(app.fetch, {
    hostname: DEFAULT_HOSTNAME,
    // The adapter swaps the process's global Request and Response for its own (they skip the web
    // stream per answer) only in a process that is the runner's: as a library (`wfkit/runner`) the
    // runner must not change its host's globals.
    overrideGlobalObjects: options.ownsGlobals ?? false,
    // A request the adapter cannot turn into a fetch Request (a bad Host, a backslash in the path)
    // is the client's input: 400, not the adapter's plain-text 500.
    errorHandler: (error) =>
      failureResponse(
        error instanceof RequestError
          ? new ApiError(
              400,
              'BAD_REQUEST',
              `Expected a request target and Host header that form a URL, got: ${error.message}.`,
              { cause: error },
            )
          : error,
        runner.logger,
      ),
  });

  const server = createServer(timeoutOptions(options), (req, res) => {
    // Node's parser passes targets (`//[`, `http://[`) the URL parser refuses: a 400 naming the
    // target, answered here, before the adapter builds its Request from them.
    try {
      parseTarget(req.url);
    } catch (error) {
      return sendError(res, toApiError(error, runner.logger));
    }
    // Last resort: nothing a request does may become an unhandled rejection (it would end the process).
    listener(req, res).catch((error: unknown) => {
      runner.logger.error(`API request failed outside its handler: ${describeError(error)}`);
      res.destroy();
    });
  });
  limitConnections(server, options);
  return server;
}
