import type { Dispatcher } from 'undici';
import { errors as undiciErrors, request as undiciRequest } from './undici-parts.js';
import { EndpointTimeoutError } from '../errors.js';
import type { OriginPattern } from './origins.js';
import { createAgents, type DispatchOptions, type EgressAgents } from './agents.js';
import { EgressRefusedError, judgeDestination, type EgressPurpose } from './destinations.js';
import { SlotTable, type OriginCount, type Slot, type SlotsFull } from './slots.js';

/** The gate's limits (`RunnerOptions.egress`). */
export interface EgressOptions {
  /**
   * Requests in flight at once to one call target's origin (`context.call`, native and Upstash),
   * per runner: a target that hangs holds at most this many of the shared slots. @default 32
   */
  perOrigin?: number;
  /**
   * Requests in flight at once to one app origin (drives, deliveries, callbacks), per runner. The
   * apps are the operator's own, so by default only the loops' own concurrency bounds them; set it
   * to keep one slow app from holding every drive slot. @default unlimited
   */
  perAppOrigin?: number;
  /** Time to open a connection. @default 10 s */
  connectTimeoutMs?: number;
  /** Most bytes read of one streamed answer (a drive's outcome stream), on top of its own line caps. @default 256 MiB */
  maxStreamBytes?: number;
}

export const DEFAULT_PER_CALL_ORIGIN = 32;
export const DEFAULT_MAX_STREAM_BYTES = 256 * 1024 * 1024;

export interface EgressRequest {
  purpose: EgressPurpose;
  /** A slot from `acquire` for this request's origin: every request counts against its origin's share. */
  slot: Slot;
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  signal?: AbortSignal | undefined;
  /** Time to the answer's headers. @default the agent's (drives: `dispatch.headersTimeoutMs`) */
  headersTimeoutMs?: number;
  /** Longest silence while reading the answer. @default the agent's */
  bodyTimeoutMs?: number;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as it arrives, at most `maxStreamBytes` of it. */
  chunks: AsyncIterable<Uint8Array>;
}

export interface EgressAnswer {
  status: number;
  /** Lowercase names, repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The headers the answer repeated (two `Set-Cookie`), each value as sent: QStash hands a call's answer so. */
  repeated?: Record<string, string[]>;
  /** At most the `maxBytes` asked for; the rest was never read (the connection was let go). */
  body: Buffer;
}

/** A streamed answer longer than the gate reads. */
export class AnswerTooLargeError extends Error {
  override name = 'AnswerTooLargeError';
  constructor(url: string, limit: number) {
    super(
      `The answer of ${url} passed ${limit} bytes, the most the runner reads of one answer; the rest was not read.`,
    );
  }
}

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

function repeatedOf(headers: Record<string, string | string[] | undefined>): Record<string, string[]> | undefined {
  let out: Record<string, string[]> | undefined;
  for (const [name, value] of Object.entries(headers))
    if (Array.isArray(value) && value.length > 1) (out ??= {})[name.toLowerCase()] = value;
  return out;
}

function isTimeout(error: unknown): boolean {
  return error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError;
}

/**
 * The one way out of the runner: every request it sends (drives, deliveries, calls, callbacks,
 * alerts) goes through `stream` or `read`, after `acquire` gave it a slot at its destination's
 * origin. The gate checks the destination against its purpose's rule (destinations.ts), sends
 * through its own agents (no redirects followed; a call's connection made only to an allowed
 * origin or a public address), and bounds what it reads of the answer.
 */
export class EgressGate {
  private readonly agents: EgressAgents;
  private readonly allowed: readonly OriginPattern[];
  private readonly appSlots: SlotTable;
  private readonly callSlots: SlotTable;
  private readonly perCallOrigin: number;
  private readonly perAppOrigin: number;
  private readonly maxStreamBytes: number;

  /** `allowed` is the runner's own list (the array `allowOrigin` adds to), read at each request. */
  constructor(
    allowed: readonly OriginPattern[],
    dispatch: DispatchOptions = {},
    options: EgressOptions = {},
    now: () => number = Date.now,
  ) {
    this.allowed = allowed;
    for (const name of ['perOrigin', 'perAppOrigin', 'connectTimeoutMs', 'maxStreamBytes'] as const) {
      const value = options[name];
      if (value !== undefined && !(value > 0))
        throw new Error(`Expected \`egress.${name}\` to be a positive number, got ${String(value)}.`);
    }
    this.agents = createAgents(dispatch, allowed, options.connectTimeoutMs);
    this.appSlots = new SlotTable(now);
    this.callSlots = new SlotTable(now);
    this.perCallOrigin = options.perOrigin ?? DEFAULT_PER_CALL_ORIGIN;
    this.perAppOrigin = options.perAppOrigin ?? Number.POSITIVE_INFINITY;
    this.maxStreamBytes = options.maxStreamBytes ?? DEFAULT_MAX_STREAM_BYTES;
  }

  /**
   * A slot for a request to `url`'s origin, or `SlotsFull` when this runner already has its share
   * in flight there: the caller then defers the work (without holding its loop's slot) and tries
   * again shortly; `key` (the run or message) shows as waiting there meanwhile.
   */
  acquire(url: URL, purpose: EgressPurpose, key?: string): Slot | SlotsFull {
    if (purpose === 'call') return this.callSlots.acquire(url.origin, this.perCallOrigin, key);
    const limit = purpose === 'alert' ? Number.POSITIVE_INFINITY : this.perAppOrigin;
    return this.appSlots.acquire(url.origin, limit, key);
  }

  /** Why `key` waits now, when it was deferred for want of a slot. */
  waitingReason(key: string): string | undefined {
    return this.callSlots.waitingReason(key) ?? this.appSlots.waitingReason(key);
  }

  /** Every origin with requests in flight or deferred work waiting, calls and apps apart (for /metrics). */
  counts(): { calls: OriginCount[]; apps: OriginCount[] } {
    return { calls: this.callSlots.counts(), apps: this.appSlots.counts() };
  }

  private dispatcherFor(request: EgressRequest): Dispatcher {
    const verdict = judgeDestination(request.url, request.purpose, this.allowed);
    if (verdict === false)
      throw new EgressRefusedError(request.purpose, request.url.origin, 'that origin is not an allowed one');
    return request.purpose === 'call' ? this.agents.calls : this.agents.apps;
  }

  private send(request: EgressRequest): Promise<Dispatcher.ResponseData> {
    const { url, method, headers, body, signal } = request;
    return undiciRequest(this.dispatcherFor(request), {
      origin: url.origin,
      path: url.pathname + url.search,
      method: method as Dispatcher.HttpMethod,
      headers,
      // A GET keeps its body, as QStash (a Go service) sends it: Upstash apps call GET routes with a
      // JSON body (the SDK's Express example does). HEAD has none; an empty GET body is left out.
      body: method === 'HEAD' || (method === 'GET' && !body) ? undefined : body,
      signal,
      ...(request.headersTimeoutMs !== undefined && { headersTimeout: request.headersTimeoutMs }),
      ...(request.bodyTimeoutMs !== undefined && { bodyTimeout: request.bodyTimeoutMs }),
    });
  }

  /**
   * Sends and hands the answer over as it arrives (drives read their outcome stream line by line).
   * Timeouts become `EndpointTimeoutError`; past `maxStreamBytes` the stream throws `AnswerTooLargeError`.
   */
  async stream(request: EgressRequest): Promise<EgressResponse> {
    const href = request.url.href;
    let response: Dispatcher.ResponseData;
    try {
      response = await this.send(request);
    } catch (error) {
      if (isTimeout(error)) throw new EndpointTimeoutError(href, { cause: error });
      throw error;
    }
    const limit = this.maxStreamBytes;
    return {
      status: response.statusCode,
      headers: flatten(response.headers),
      chunks: (async function* () {
        let size = 0;
        try {
          for await (const chunk of response.body) {
            size += (chunk as Uint8Array).byteLength;
            if (size > limit) {
              response.body.destroy();
              throw new AnswerTooLargeError(href, limit);
            }
            yield chunk as Uint8Array;
          }
        } catch (error) {
          if (isTimeout(error)) throw new EndpointTimeoutError(href, { cause: error });
          throw error;
        }
      })(),
    };
  }

  /** Sends and reads at most `maxBytes` of the answer (the rest is not read: the connection is let go). */
  async read(request: EgressRequest, maxBytes: number): Promise<EgressAnswer> {
    const response = await this.send(request);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      const buffer = Buffer.from(chunk as Uint8Array);
      if (size + buffer.length >= maxBytes) {
        chunks.push(buffer.subarray(0, maxBytes - size));
        size = maxBytes;
        response.body.destroy();
        break;
      }
      chunks.push(buffer);
      size += buffer.length;
    }
    const repeated = repeatedOf(response.headers);
    return {
      status: response.statusCode,
      headers: flatten(response.headers),
      ...(repeated && { repeated }),
      body: Buffer.concat(chunks),
    };
  }

  /** Closes both agents (after the loops stopped). */
  async close(): Promise<void> {
    await Promise.all([this.agents.apps.close(), this.agents.calls.close()]);
  }
}
