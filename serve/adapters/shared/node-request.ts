import type { IncomingMessage } from 'node:http';
import { ProtocolError } from '../../../protocol/errors.js';
import { errorResponse } from '../../core/http.js';

/**
 * Builds a web Request from node's; the body streams through untouched so signatures verify.
 * Used by the node adapter and by h3 v1 (`event.node.req`). Only types come from `node:http`,
 * so this stays edge-safe: it runs wherever the host hands over an IncomingMessage.
 */

/** How much of a body is read ahead of the route: the rest waits in the socket (backpressure). */
const READ_AHEAD_BYTES = 64 * 1024;

/** A host name, IPv4 or bracketed IPv6 address, with an optional port: nothing that could bend the URL's path. */
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The body as a pull stream. The IncomingMessage is paused until the route reads, and paused again
 * whenever `READ_AHEAD_BYTES` wait unread, so a large or endless body costs bounded memory. Once
 * the stream is cancelled (the route refused the body, or the Request was garbage-collected, which
 * cancels its body) nothing is enqueued any more: that threw `ERR_INVALID_STATE` from an event
 * listener, an uncaught exception that killed the app. The rest is then read and dropped, so the
 * connection drains instead of stalling.
 */
function bodyOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  let settled = false;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const settle = (action: () => void): void => {
    if (settled) return;
    settled = true;
    action();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        // Paused before the 'data' listener, so attaching it does not start the flow.
        req.pause();
        req.on('data', (chunk: Uint8Array) => {
          if (settled) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.on('end', () => settle(() => controller.close()));
        // `on`, not `once`: a second error with no listener left would be thrown.
        req.on('error', (error) => settle(() => controller.error(error)));
        req.on('close', () => {
          if (!req.complete)
            settle(() => controller.error(new Error('the client closed the connection before the body ended')));
        });
      },
      pull() {
        req.resume();
      },
      cancel() {
        settled = true;
        req.resume();
      },
    },
    { highWaterMark: READ_AHEAD_BYTES, size: (chunk) => chunk.byteLength },
  );
}

/** The web Request for node's; throws `ProtocolError` when its Host or target makes no URL. */
export function toRequest(req: IncomingMessage): Request {
  const encrypted = (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
  const host = req.headers.host ?? 'localhost';
  if (!HOST.test(host)) {
    throw new ProtocolError(
      `Expected the Host header to be a host name or address with an optional port, got ${JSON.stringify(host.slice(0, 100))}.`,
    );
  }
  let url: URL;
  try {
    url = new URL(`${encrypted ? 'https' : 'http'}://${host}${req.url ?? '/'}`);
  } catch (error) {
    // node:http accepts targets fetch cannot represent (absolute-form `POST http://…`, a port past 65535).
    throw new ProtocolError(
      `Cannot build a request URL from "${req.url}" on host ${JSON.stringify(host)}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  // fetch refuses some methods node:http accepts (TRACE, CONNECT, TRACK): check before the body is tapped.
  if (!FETCH_METHOD.test(req.method ?? '') || FORBIDDEN_METHODS.has((req.method ?? '').toUpperCase())) {
    throw new UnsupportedMethodError(req.method ?? '');
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  return new Request(url, {
    method: req.method,
    headers,
    body: hasBody ? bodyOf(req) : null,
    duplex: 'half',
  } as RequestInit);
}

/** A method token, as fetch accepts it; `FORBIDDEN_METHODS` are the ones its Request refuses. */
const FETCH_METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FORBIDDEN_METHODS: ReadonlySet<string> = new Set(['CONNECT', 'TRACE', 'TRACK']);

/** A method a web Request cannot carry; the route only takes POST anyway. */
class UnsupportedMethodError extends ProtocolError {
  constructor(method: string) {
    super(
      `Expected POST, got ${JSON.stringify(method.slice(0, 32))}: this route only starts and drives workflow runs.`,
    );
  }
}

/** `toRequest`, or the 400 answer for a request it cannot build: adapters never throw into their host. */
export function toRequestOrRefusal(req: IncomingMessage): Request | Response {
  try {
    return toRequest(req);
  } catch (error) {
    if (error instanceof UnsupportedMethodError)
      return errorResponse(405, 'METHOD_NOT_ALLOWED', error.message, { allow: 'POST' });
    if (!(error instanceof ProtocolError)) throw error;
    return errorResponse(400, error.code, error.message);
  }
}
