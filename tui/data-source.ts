import { createParser } from 'eventsource-parser';
import type { StreamEvent } from '../runner-core/stream-events.js';
import type { Run, RunPage } from '../runner-core/store/types.js';
import { Client, ClientError, type RunDetail } from '../serve/client.js';

export type { RunDetail } from '../serve/client.js';

export interface EventHandlers {
  /** A live event; slim (bodies left out, see stream-events.ts) unless the source says otherwise. */
  event(event: StreamEvent): void;
  /** The stream is open: from here on no change is missed (read the history now). */
  open(): void;
  /** The stream ended or could not open; the source tries again by itself. */
  closed(error: Error): void;
}

/**
 * Everything the dashboard reads and does, so the same dashboard can run against the local
 * runner of `wf dev` or a remote one. `httpDataSource` speaks the runner's HTTP API.
 */
export interface DataSource {
  /** Where the data comes from, as the status bar shows it. */
  readonly label: string;
  listRuns(query: { cursor?: string; limit?: number }): Promise<RunPage>;
  getRun(id: string): Promise<RunDetail>;
  /**
   * Follows every runner event until the returned function is called. A stream the runner ends
   * (a restart, or this reader fell a buffer behind) is opened again and `open` says so: read
   * the snapshot then.
   */
  subscribe(handlers: EventHandlers): () => void;
  cancel(id: string): Promise<Run>;
  rerun(id: string): Promise<Run>;
}

export interface HttpDataSourceOptions {
  url: string;
  token?: string;
  /** Wait before reconnecting a broken event stream; doubles up to 8× on repeated failures. @default 1000 */
  retryMs?: number;
  /** Whole events (`GET /v1/events?bodies=1`) instead of slim ones, for a reader that prints bodies. @default false */
  bodies?: boolean;
  fetch?: typeof fetch;
}

/** The runner's message without the client's "The runner answered … with 409:" preamble. */
export function errorMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return error instanceof ClientError ? message.replace(/^The runner answered .*? with \d+: /, '') : message;
}

/** A data source over the runner API: `Client` for requests, `GET /v1/events` (SSE) for live events. */
export function httpDataSource(options: HttpDataSourceOptions): DataSource {
  const url = options.url.replace(/\/+$/, '');
  const fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  const client = new Client({ runnerUrl: url, token: options.token ?? '', fetch: fetcher });
  const retryMs = options.retryMs ?? 1000;

  async function stream(handlers: EventHandlers, signal: AbortSignal): Promise<void> {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const response = await fetcher(`${url}/v1/events${options.bodies ? '?bodies=1' : ''}`, { headers, signal });
    if (!response.ok || !response.body) throw new Error(`The runner answered ${response.status} to GET /v1/events.`);
    handlers.open();
    const parser = createParser({ onEvent: (message) => handlers.event(JSON.parse(message.data) as StreamEvent) });
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    throw new Error('The runner closed the event stream.');
  }

  return {
    label: url,
    listRuns: (query) => client.list(query),
    getRun: (id) => client.get(id),
    cancel: (id) => client.cancel(id),
    rerun: (id) => client.rerun(id),
    subscribe(handlers) {
      const controller = new AbortController();
      void (async () => {
        let failures = 0;
        const open = (): void => {
          failures = 0;
          handlers.open();
        };
        while (!controller.signal.aborted) {
          try {
            await stream({ ...handlers, open }, controller.signal);
          } catch (error) {
            if (controller.signal.aborted) return;
            handlers.closed(error instanceof Error ? error : new Error(String(error)));
          }
          const wait = retryMs * 2 ** Math.min(failures++, 3);
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, wait);
            controller.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
          });
        }
      })();
      return () => controller.abort();
    },
  };
}
