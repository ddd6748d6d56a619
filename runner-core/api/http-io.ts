import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../errors.js';

/** Reads a request body up to `limit` bytes; more is a 413 without buffering the rest. */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new ApiError(413, 'TOO_LARGE', `Request body of ${declared} bytes is over the limit of ${limit} bytes.`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      if (size > limit) return; // already refused: the rest is read and dropped
      size += chunk.length;
      if (size > limit) {
        // Not req.destroy(): that drops the socket, so the client sees a reset instead of the 413.
        chunks.length = 0;
        reject(new ApiError(413, 'TOO_LARGE', `Request body is over the limit of ${limit} bytes.`));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    // The client went away or broke the body off: its input, not the runner's failure.
    req.on('error', (error) => reject(new ApiError(400, 'BAD_REQUEST', `The request body did not arrive whole: ${error.message}.`, { cause: error })));
  });
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

export function sendError(res: ServerResponse, error: ApiError): void {
  sendJson(res, error.status, { error: { code: error.code, message: error.message } }, error.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
}

/** True for 127.0.0.0/8, ::1 and localhost: where the runner may answer without a token. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
