import { WorkflowError } from '../../protocol/errors.js';

/** A JSON error body, the same shape the runner answers with. */
export function errorResponse(status: number, code: string, message: string, headers?: Record<string, string>): Response {
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
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
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
