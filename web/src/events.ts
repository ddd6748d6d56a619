import { createParser } from 'eventsource-parser';
import type { StreamEvent } from '../../runner-core/stream-events.js';
import { authHeaders } from './api.js';

export type StreamStatus = 'connecting' | 'live' | 'offline' | 'unauthorized';

export interface FollowOptions {
  token: () => string | null;
  /** A live event, slim (bodies left out, see stream-events.ts): the open run is read again for them. */
  onEvent: (event: StreamEvent) => void;
  onStatus: (status: StreamStatus) => void;
  /** Each time the stream (re)connects: what happened while it was down is reloaded here. */
  onOpen: () => void;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/**
 * Follows `GET /v1/events` until stopped, reconnecting with backoff (0.5 s doubling to 10 s):
 * after a restart of the runner, or when it dropped this reader for falling a buffer behind.
 * `fetch` and a streaming parser instead of `EventSource`, which cannot send the bearer token.
 * A 401 ends it: the token is wrong or gone, and the page asks for one.
 * @example const stop = followEvents({ token, onEvent, onStatus, onOpen: reload });
 */
export function followEvents(options: FollowOptions): () => void {
  const controller = new AbortController();
  const { signal } = controller;
  const parser = createParser({
    onEvent: (message) => {
      if (message.event !== 'run' && message.event !== 'step' && message.event !== 'attempt') return;
      try {
        options.onEvent(JSON.parse(message.data) as StreamEvent);
      } catch (error) {
        console.error('[wfkit] unreadable event', error);
      }
    },
  });

  void (async () => {
    let delay = 500;
    while (!signal.aborted) {
      options.onStatus('connecting');
      try {
        const response = await fetch('/v1/events', { headers: { accept: 'text/event-stream', ...authHeaders(options.token()) }, signal, cache: 'no-store' });
        if (response.status === 401) {
          options.onStatus('unauthorized');
          return;
        }
        if (!response.ok || !response.body) throw new Error(`GET /v1/events answered ${response.status}`);
        options.onStatus('live');
        options.onOpen();
        delay = 500;
        parser.reset();
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
      } catch (error) {
        if (signal.aborted) return;
        console.warn('[wfkit] event stream interrupted:', (error as Error).message);
      }
      if (signal.aborted) return;
      options.onStatus('offline');
      await sleep(delay, signal);
      delay = Math.min(delay * 2, 10_000);
    }
  })();

  return () => controller.abort();
}
