import { ProtocolError, WorkflowError } from '../../protocol/errors.js';

/** A JSON error body, the same shape the runner answers with. */
export function errorResponse(
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): Response {
  return Response.json({ error: { code, message } }, { status, headers });
}

/** Reads a body as text, refusing more than `limit` bytes without buffering the excess. */
export async function readBodyLimited(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLargeError(limit);
  if (!request.body) return '';
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  let size = 0;
  let text = '';
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (error) {
      // The client went away mid-body (or the host failed it): the request's fault, not the route's.
      throw new ProtocolError(`The request body could not be read to its end: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const { done, value } = chunk;
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      // Cancelling lets the host discard the rest without buffering it (see adapters/shared/node-request.ts).
      await reader.cancel().catch(() => {});
      throw new BodyTooLargeError(limit);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

export class BodyTooLargeError extends WorkflowError {
  override name = 'BodyTooLargeError';
  readonly limit: number;
  constructor(limit: number) {
    super('PROTOCOL', `Request body is larger than the limit of ${limit} bytes.`);
    this.limit = limit;
  }
}
