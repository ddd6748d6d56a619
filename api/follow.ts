import type { StreamEvent } from './events.js';
import { ClientError } from './errors.js';
import { parseStreamEvent } from './parse.js';
import { createSseParser } from './sse-parser.js';

export interface EventsOptions {
  /** A live event: slim (bodies left out, see `OMITTED_WHEN_SLIM`) unless `bodies` is set. */
  onEvent(event: StreamEvent): void;
  /**
   * The stream is open (`reconnected`: not for the first time). Awaited before any event of
   * that connection is passed on, so a caller that reads its snapshot here misses nothing.
   */
  onOpen?(info: { reconnected: boolean }): Promise<void> | void;
  /**
   * The runner could not replay what was missed while disconnected (too long ago, or it
   * restarted): read the snapshot again. Awaited like `onOpen`.
   */
  onReset?(): Promise<void> | void;
  /** The stream broke or could not open; the client tries again after a backoff. */
  onClosed?(error: ClientError): void;
  /** Only this run's events. */
  runId?: string;
  /** Whole events (`?bodies=1`) instead of slim ones. @default false */
  bodies?: boolean;
  /** Stops following (the returned promise then resolves). */
  signal?: AbortSignal;
  /** First wait before reconnecting; doubles on each failure in a row. @default 500 */
  retryMs?: number;
  /** Longest wait between reconnects. @default 10000 */
  maxRetryMs?: number;
  /** When false, a first connection that fails rejects instead of being retried. @default true */
  retryFirstConnection?: boolean;
}

/** A 4xx other than timeouts and rate limits: the same request would fail again. */
const isFinal = (error: ClientError): boolean =>
  error.status >= 400 && error.status < 500 && error.status !== 408 && error.status !== 429;

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}

type Open = (path: string, init: { headers: Record<string, string>; signal?: AbortSignal }) => Promise<Response>;

/**
 * The follow loop behind `Client.events()`: the one SSE reader of the runner's events (the CLI,
 * the terminal and the web dashboard all use it). It remembers the last event id and sends it as
 * `Last-Event-ID` on every reconnect, so the runner replays what the client missed.
 */
export async function followEvents(options: EventsOptions, open: Open): Promise<void> {
  const { signal } = options;
  const retryMs = options.retryMs ?? 500;
  const maxRetryMs = options.maxRetryMs ?? 10_000;
  const params = new URLSearchParams();
  if (options.bodies) params.set('bodies', '1');
  if (options.runId) params.set('runId', options.runId);
  const path = `/v1/events${params.size > 0 ? `?${params}` : ''}`;
  let lastEventId: string | undefined;
  let opened = 0;
  let failures = 0;
  while (!signal?.aborted) {
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      const response = await open(path, { headers, signal });
      if (!response.body)
        throw new ClientError(response.status, 'BAD_ANSWER', `The runner answered GET ${path} without a body.`);
      await options.onOpen?.({ reconnected: opened++ > 0 });
      failures = 0;
      await read(response.body, path, options, (id) => (lastEventId = id));
      throw new ClientError(0, 'STREAM_ENDED', `The runner closed the event stream (GET ${path}).`);
    } catch (caught) {
      if (signal?.aborted) return;
      const error =
        caught instanceof ClientError
          ? caught
          : new ClientError(0, 'STREAM_BROKEN', `The event stream broke (GET ${path}): ${(caught as Error).message}`, {
              cause: caught,
            });
      if (isFinal(error) || (opened === 0 && options.retryFirstConnection === false)) throw error;
      options.onClosed?.(error);
    }
    await pause(Math.min(retryMs * 2 ** failures++, maxRetryMs), signal);
  }
}

/** Passes on the events of one open stream until it ends or breaks. */
async function read(
  body: ReadableStream<Uint8Array>,
  path: string,
  options: EventsOptions,
  seen: (id: string) => void,
): Promise<void> {
  // Events are handed on in order, one at a time: a reset's snapshot read finishes before later events.
  let queue = Promise.resolve();
  let failure: unknown;
  const feed = createSseParser((message) => {
    if (message.event !== 'run' && message.event !== 'step' && message.event !== 'attempt' && message.event !== 'reset')
      return;
    queue = queue
      .then(async () => {
        if (options.signal?.aborted) return;
        const event = parseStreamEvent(JSON.parse(message.data), `an event of GET ${path}`);
        if (event.type === 'reset') await options.onReset?.();
        else options.onEvent(event);
        if (message.id !== undefined) seen(message.id);
      })
      .catch((error: unknown) => void (failure ??= error));
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      feed(decoder.decode(value, { stream: true }));
      await queue;
      if (failure !== undefined) throw failure;
    }
  } finally {
    reader.releaseLock();
  }
}
