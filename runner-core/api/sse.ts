import type { ServerResponse } from 'node:http';
import { slimEvent } from '../../api/events.js';
import type { EventBus, RunnerEvent } from '../commit/events.js';
import { ApiError } from '../errors.js';
import { eventDto } from './dto-map.js';
import { ApiErrorWithHeaders } from './error-response.js';
import { createReplayRing, type ReplayEntry } from './sse-replay.js';

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
  /** Recent events kept to replay after a reconnect. @default SSE_REPLAY_EVENTS */
  replayEvents?: number;
  /** Bytes of serialized events kept to replay, at most. @default SSE_REPLAY_MAX_BYTES */
  replayMaxBytes?: number;
}

export interface StreamRequest {
  /** Only this run's events; null for all. */
  runId: string | null;
  /** Whole events (`?bodies=1`), else slim ones (see api/events.ts). */
  bodies: boolean;
  /** The `Last-Event-ID` header: resume after it (replayed from the ring, or a `reset`). */
  lastEventId?: string | undefined;
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
 * subscribers read it, as the contract's DTOs (`dto-map.ts`); a subscriber whose unread bytes
 * pass `maxBufferedBytes` is disconnected. Recent events stay in a ring (`sse-replay.ts`), so a
 * client that reconnects with `Last-Event-ID` gets what it missed, or a `reset` event when the
 * ring no longer holds it.
 */
export function createEventStreams(bus: EventBus, options: EventStreamsOptions = {}): EventStreams {
  const maxBuffered = options.maxBufferedBytes ?? SSE_MAX_BUFFERED_BYTES;
  const maxSubscribers = options.maxSubscribers ?? SSE_MAX_SUBSCRIBERS;
  let size = 0;
  const frame = (entry: ReplayEntry, bodies: boolean): string => {
    const key = bodies ? 'whole' : 'slim';
    const cached = entry[key];
    if (cached !== undefined) return cached;
    const dto = eventDto(entry.event);
    const text = `id: ${entry.id}\nevent: ${dto.type}\ndata: ${JSON.stringify(bodies ? dto : slimEvent(dto))}\n\n`;
    ring.remember(entry, key, text);
    return text;
  };
  const ring = createReplayRing(bus, options);
  const wanted = (event: RunnerEvent, runId: string | null): boolean =>
    runId === null ||
    (event.type === 'run' ? event.run.id : event.type === 'step' ? event.step.runId : event.attempt.runId) === runId;

  return {
    get size() {
      return size;
    },
    open(res, { runId, bodies, lastEventId }) {
      if (size >= maxSubscribers) {
        const message = `Expected at most ${maxSubscribers} event streams at once; close one, or try again later.`;
        throw new ApiErrorWithHeaders(429, 'TOO_MANY_SUBSCRIBERS', message, { 'retry-after': '5' });
      }
      size++;
      res.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      });
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
      // What the client missed, read before anything new can arrive: all of open() runs in one
      // tick, so no event falls between the replay and the subscription, and none comes twice.
      const missed = lastEventId === undefined ? [] : ring.after(lastEventId);
      const latest = ring.latestId();
      const unsubscribe = ring.subscribe((entry) => {
        if (wanted(entry.event, runId)) send(frame(entry, bodies));
      });
      const heartbeat = setInterval(() => send(': ping\n\n'), HEARTBEAT_MS);
      heartbeat.unref();
      if (missed === undefined)
        send(`${latest === undefined ? '' : `id: ${latest}\n`}event: reset\ndata: {"type":"reset"}\n\n`);
      else for (const entry of missed) if (wanted(entry.event, runId)) send(frame(entry, bodies));
      res.on('close', close);
      res.on('error', close);
    },
  };
}
