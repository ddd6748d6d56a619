import type { Client } from '../../api/client.js';
import { ClientError } from '../../api/errors.js';
import type { StreamEvent } from '../../api/events.js';

export type StreamStatus = 'connecting' | 'live' | 'offline' | 'unauthorized';

export interface FollowOptions {
  /** The one client (same origin, the page's token). */
  client: Client;
  /** A live event, slim (bodies left out, see api/events.ts): the open run is read again for them. */
  onEvent: (event: StreamEvent) => void;
  onStatus: (status: StreamStatus) => void;
  /** Each time the stream (re)connects, or the runner could not replay what was missed: reload here. */
  onOpen: () => void;
}

/**
 * Follows `GET /v1/events` until stopped, with the `Client`'s reconnects (0.5 s doubling to
 * 10 s, resuming with `Last-Event-ID`): after a restart of the runner, or when it dropped this
 * reader for falling a buffer behind. A 401 ends it: the token is wrong or gone, and the page
 * asks for one.
 * @example const stop = followEvents({ client: api.client, onEvent, onStatus, onOpen: reload });
 */
export function followEvents(options: FollowOptions): () => void {
  const controller = new AbortController();
  options.onStatus('connecting');
  options.client
    .events({
      signal: controller.signal,
      onEvent: options.onEvent,
      onOpen: () => {
        options.onStatus('live');
        options.onOpen();
      },
      onReset: () => options.onOpen(),
      onClosed: (error) => {
        console.warn('[wfkit] event stream interrupted:', error.message);
        options.onStatus('offline');
      },
    })
    .catch((error: unknown) => {
      if (controller.signal.aborted) return;
      options.onStatus(error instanceof ClientError && error.status === 401 ? 'unauthorized' : 'offline');
    });
  return () => controller.abort();
}
