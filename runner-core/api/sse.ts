import type { ServerResponse } from 'node:http';
import type { EventBus, RunnerEvent } from '../events.js';
import { ApiError } from '../errors.js';
import { ApiErrorWithHeaders } from './error-response.js';
import { eventRunId, slimEvent } from '../stream-events.js';

/**
 * Bytes a subscriber may leave unread (buffered in the runner for it) before it is disconnected.
 * A reader that stopped reading would otherwise make the runner keep every event for it; one
 * that is only slow reconnects and reads its snapshot again, as after any break.
 */
export const SSE_MAX_BUFFERED_BYTES = 1024 * 1024;

/** Event streams open at once; more are refused with 429 (each may hold the buffer above). */
export const SSE_MAX_SUBSCRIBERS = 100;

/** A comment this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;

export interface EventStreamsOptions {
  /** @default SSE_MAX_BUFFERED_BYTES */
  maxBufferedBytes?: number;
  /** @default SSE_MAX_SUBSCRIBERS */
  maxSubscribers?: number;
}

export interface StreamRequest {
  /** Only this run's events; null for all. */
  runId: string | null;
  /** Whole events (`?bodies=1`), else slim ones (see stream-events.ts). */
  bodies: boolean;
}

export interface EventStreams {
  /**
   * `GET /v1/events`: every runner event, live, as a server-sent event with an `id:`, written
   * straight to the node response, so that its unread bytes (`writableLength`) can be counted.
   */
  open(res: ServerResponse, request: StreamRequest): void;
  /** Subscribers connected now. */
  readonly size: number;
}

/** Reads `?bodies=`: `1`/`true` for whole events, `0`/`false`/absent for slim ones. */
export function parseBodiesParam(value: string | null): boolean {
  if (value === null || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  throw new ApiError(400, 'BAD_REQUEST', `Expected \`bodies\` to be 1 or 0, got "${value.slice(0, 40)}".`);
}

/**
 * The SSE side of the API. Each event is serialized once per form (slim, whole) however many
 * subscribers read it; a subscriber whose unread bytes pass `maxBufferedBytes` is disconnected.
 */
export function createEventStreams(bus: EventBus, options: EventStreamsOptions = {}): EventStreams {
  const maxBuffered = options.maxBufferedBytes ?? SSE_MAX_BUFFERED_BYTES;
  const maxSubscribers = options.maxSubscribers ?? SSE_MAX_SUBSCRIBERS;
  let size = 0;
  // Listeners run one after the other for one event: a one-entry cache serves them all.
  let cached: { id: number; slim?: string; whole?: string } = { id: 0 };
  const frame = (event: RunnerEvent, id: number, bodies: boolean): string => {
    if (cached.id !== id) cached = { id };
    const key = bodies ? 'whole' : 'slim';
    return (cached[key] ??= `id: ${id}\nevent: ${event.type}\ndata: ${JSON.stringify(bodies ? event : slimEvent(event))}\n\n`);
  };

  return {
    get size() {
      return size;
    },
    open(res, { runId, bodies }) {
      if (size >= maxSubscribers) {
        const message = `Expected at most ${maxSubscribers} event streams at once; close one, or try again later.`;
        throw new ApiErrorWithHeaders(429, 'TOO_MANY_SUBSCRIBERS', message, { 'retry-after': '5' });
      }
      size++;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.write(': connected\n\n');
      let closed = false;
      const close = (): void => {
        if (closed) return;
        closed = true;
        size--;
        clearInterval(heartbeat);
        unsubscribe();
      };
      const send = (text: string): void => {
        if (closed) return;
        res.write(text);
        // A reader this far behind is stalled or too slow: drop it rather than hold more for it.
        if (res.writableLength > maxBuffered) {
          close();
          res.destroy();
        }
      };
      const unsubscribe = bus.subscribe((event, id) => {
        if (runId === null || eventRunId(event) === runId) send(frame(event, id, bodies));
      });
      const heartbeat = setInterval(() => send(': ping\n\n'), HEARTBEAT_MS);
      heartbeat.unref();
      res.on('close', close);
      res.on('error', close);
    },
  };
}
