import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { EndpointTimeoutError } from './errors.js';

/** How long the runner waits for a drive response's headers (the route sends them before its first step). */
export const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;

export interface DispatchOptions {
  /** Time to the response headers; the route sends them before the first step runs. @default 30s */
  headersTimeoutMs?: number;
  /** Longest silence between two outcome lines, i.e. the longest single step. @default 15 min */
  bodyTimeoutMs?: number;
  /** Connections kept per origin. @default 256 */
  connections?: number;
}

export interface EndpointResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as it arrives. */
  chunks: AsyncIterable<Uint8Array>;
}

/** One undici Agent for every route the runner drives: a keep-alive pool per origin. */
export function createAgent(options: DispatchOptions = {}): Agent {
  return new Agent({
    headersTimeout: options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    bodyTimeout: options.bodyTimeoutMs ?? 15 * 60_000,
    connections: options.connections ?? 256,
    keepAliveTimeout: 4_000,
    pipelining: 1,
  });
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export function isTimeout(error: unknown): boolean {
  return error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError;
}

/** POSTs a drive request; the caller consumes the body. Timeouts become EndpointTimeoutError. */
export async function postToEndpoint(
  dispatcher: Dispatcher,
  url: string,
  headers: Record<string, string>,
  body: string,
  signal?: AbortSignal,
): Promise<EndpointResponse> {
  const target = new URL(url);
  try {
    const response = await dispatcher.request({
      origin: target.origin,
      path: target.pathname + target.search,
      method: 'POST',
      headers,
      body,
      signal,
    });
    return {
      status: response.statusCode,
      headers: flattenHeaders(response.headers),
      chunks: (async function* () {
        try {
          for await (const chunk of response.body) yield chunk as Uint8Array;
        } catch (error) {
          if (isTimeout(error)) throw new EndpointTimeoutError(url, { cause: error });
          throw error;
        }
      })(),
    };
  } catch (error) {
    if (isTimeout(error)) throw new EndpointTimeoutError(url, { cause: error });
    throw error;
  }
}
