import type { Server, ServerOptions } from 'node:http';
import type { Duplex } from 'node:stream';

/** Time a client has to send its request line and headers (slowloris: trickling headers). */
export const HEADERS_TIMEOUT_MS = 10_000;
/** Time a client has to send its whole request, body included (the body cap is 1 MiB). */
export const REQUEST_TIMEOUT_MS = 30_000;
/** Connections open at once; Node drops the ones beyond. */
export const MAX_CONNECTIONS = 1024;
/** How often Node checks the two timeouts above (its default, 30 s, would let them run 30 s late). */
const TIMEOUT_CHECK_MS = 1_000;

export interface ConnectionLimits {
  /** @default HEADERS_TIMEOUT_MS */
  headersTimeoutMs?: number;
  /** @default REQUEST_TIMEOUT_MS */
  requestTimeoutMs?: number;
  /** @default MAX_CONNECTIONS */
  maxConnections?: number;
}

/** Node's parser errors, as the status a client should see. */
function statusOf(error: NodeJS.ErrnoException): { status: number; reason: string; code: string; message: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      code: 'HEADERS_TOO_LARGE',
      message: 'The request headers are over the size limit.',
    };
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { status: 408, reason: 'Request Timeout', code: 'TIMEOUT', message: 'The request did not arrive in time.' };
  return {
    status: 400,
    reason: 'Bad Request',
    code: 'BAD_REQUEST',
    message: `Malformed HTTP request (${error.code ?? 'parse error'}).`,
  };
}

/** The timeouts, as `createServer` options (the check interval can only be set there). */
export function timeoutOptions(limits: ConnectionLimits = {}): ServerOptions {
  const requestTimeout = limits.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  return {
    requestTimeout,
    headersTimeout: Math.min(limits.headersTimeoutMs ?? HEADERS_TIMEOUT_MS, requestTimeout),
    connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, requestTimeout),
  };
}

/**
 * Bounds what clients can hold (connections at once) and answers a request Node cannot parse
 * (a bad request line or header, headers too large, too slow) with a JSON error, then closes.
 */
export function limitConnections(server: Server, limits: ConnectionLimits = {}): void {
  server.maxConnections = limits.maxConnections ?? MAX_CONNECTIONS;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node's own handler: answer only when nothing of a response went out on this socket yet.
    const written = (socket as Duplex & { bytesWritten?: number }).bytesWritten ?? 0;
    if (error.code === 'ECONNRESET' || !socket.writable || written > 0) return void socket.destroy();
    const { status, reason, code, message } = statusOf(error);
    const body = JSON.stringify({ error: { code, message } });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}
