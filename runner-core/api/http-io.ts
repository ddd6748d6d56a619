import { ApiError } from '../errors.js';

/**
 * Reads a request body up to `limit` bytes; more is a 413. The rest is read and dropped, never
 * cancelled: cancelling would reset the connection and the client would not see the 413.
 */
export async function readBody(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > limit) {
    discard(request.body?.getReader());
    throw new ApiError(413, 'TOO_LARGE', `Request body of ${declared} bytes is over the limit of ${limit} bytes.`);
  }
  if (!request.body) return '';
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
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // The client went away or broke the body off: its input, not the runner's failure.
    throw new ApiError(
      400,
      'BAD_REQUEST',
      `The request body did not arrive whole: ${error instanceof Error ? error.message : String(error)}.`,
      { cause: error },
    );
  }
  return Buffer.concat(chunks).toString('utf8');
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

export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
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
