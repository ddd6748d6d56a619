import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { ServerResponse } from 'node:http';
import { ApiError } from '../errors.js';
import { ByteBudget } from './byte-budget.js';

/** Bodies up to this size are read at once; larger ones share `LARGE_BODIES` (the QStash API takes up to 10 MiB). */
export const FREE_BODY_BYTES = 1024 * 1024;

/**
 * What the process holds at once of request bodies over `FREE_BODY_BYTES`: a few clients sending
 * the largest bodies together wait their turn (their sockets simply are not read meanwhile, and the
 * server's request timeout still ends a client that stalls) instead of each being held whole at once.
 */
export const LARGE_BODIES = new ByteBudget(16 * 1024 * 1024);

/**
 * Reads a request body up to `limit` bytes; more is a 413. The rest is read and dropped, never
 * cancelled: cancelling would reset the connection and the client would not see the 413. A body
 * over `FREE_BODY_BYTES` is read within `LARGE_BODIES`.
 */
export async function readBody(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    discard(request.body?.getReader());
    throw new ApiError(413, 'TOO_LARGE', `Request body of ${declared} bytes is over the limit of ${limit} bytes.`);
  }
  const known = Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined;
  // A declared length within the limit bounds what is read (node's parser reads no byte past it):
  // `text()` then takes the body at once, which the node adapter serves from the socket without
  // building a web stream (about 0.3 ms a request, on every start). Counted again for other hosts.
  // Checked before `request.body`: asking for that builds the web stream on the node adapter.
  if (known !== undefined && known <= FREE_BODY_BYTES) return known === 0 ? '' : readDeclared(request, limit);
  if (!request.body) return '';
  let release = known !== undefined && known > FREE_BODY_BYTES ? await LARGE_BODIES.take(known) : undefined;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        discard(reader);
        throw new ApiError(413, 'TOO_LARGE', `Request body is over the limit of ${limit} bytes.`);
      }
      // A body of unknown length that outgrows the free size waits for room for the most it may be.
      if (!release && size > FREE_BODY_BYTES) release = await LARGE_BODIES.take(limit);
      chunks.push(value);
    }
    return Buffer.concat(chunks, size).toString('utf8');
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw incomplete(error);
  } finally {
    release?.();
  }
}

/** A body of declared length within the free size, read at once and counted against `limit`. */
async function readDeclared(request: Request, limit: number): Promise<string> {
  let text: string;
  try {
    text = await request.text();
  } catch (error) {
    throw incomplete(error);
  }
  if (Buffer.byteLength(text) > limit)
    throw new ApiError(413, 'TOO_LARGE', `Request body is over the limit of ${limit} bytes.`);
  return text;
}

/** The client went away or broke the body off: its input, not the runner's failure. */
function incomplete(error: unknown): ApiError {
  return new ApiError(
    400,
    'BAD_REQUEST',
    `The request body did not arrive whole: ${error instanceof Error ? error.message : String(error)}.`,
    { cause: error },
  );
}

/** Reads what is left of a refused body and drops it, in the background. */
function discard(reader: ReadableStreamDefaultReader<Uint8Array> | undefined): void {
  if (!reader) return;
  const next = (): void =>
    void reader.read().then(
      ({ done }) => (done ? undefined : next()),
      () => undefined, // the client went away: nothing left to drop
    );
  next();
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A JSON answer written straight on the node response (`c.env.outgoing` on the node server; else
 * `jsonResponse`). `@hono/node-server` reads a global Response's body through its web stream
 * before writing it; a start's 201 is written in the turn its drive request waits for, so that read
 * was on every run's path (about 0.1 to 0.3 ms on two busy cores). Same status, headers and body.
 */
export function sendJson(outgoing: ServerResponse | undefined, status: number, value: unknown): Response {
  if (!outgoing) return jsonResponse(status, value);
  const text = JSON.stringify(value);
  outgoing.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
  outgoing.end(text);
  return RESPONSE_ALREADY_SENT;
}

export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': JSON_TYPE, ...headers },
  });
}

/** `{ error: { code, message } }` with the error's status (and `WWW-Authenticate` on a 401). */
export function errorResponse(error: ApiError, headers: Record<string, string> = {}): Response {
  const extra = error.status === 401 ? { 'www-authenticate': 'Bearer', ...headers } : headers;
  return jsonResponse(error.status, { error: { code: error.code, message: error.message } }, extra);
}

/** True for 127.0.0.0/8, ::1 and localhost: where the runner may answer without a token. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
