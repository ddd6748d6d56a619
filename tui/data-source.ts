import { Client } from '../api/client.js';
import type { Run, RunPage } from '../api/dto.js';
import { ClientError } from '../api/errors.js';
import type { RunListQuery } from '../api/run-query.js';
import type { Schedule } from '../api/schedule-dto.js';
import type { StreamEvent } from '../api/events.js';
import type { RunDetail } from '../api/parse.js';

export type { RunDetail } from '../api/parse.js';

export interface EventHandlers {
  /** A live event; slim (bodies left out, see api/events.ts) unless the source says otherwise. */
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
  /** Runs newest first; the filters are the runner's search (api/run-query.ts). */
  listRuns(query: RunListQuery): Promise<RunPage>;
  getRun(id: string): Promise<RunDetail>;
  /**
   * Follows every runner event until the returned function is called. A stream the runner ends
   * (a restart, or this reader fell a buffer behind) is opened again, resuming where it stopped;
   * `open` says so, and comes again when the runner could not replay what was missed: read the
   * snapshot then.
   */
  subscribe(handlers: EventHandlers): () => void;
  cancel(id: string): Promise<Run>;
  rerun(id: string): Promise<Run>;
  /** Starts a failed or cancelled run again at its failed step. */
  resume(id: string): Promise<Run>;
  /** The runner's cron schedules, for the run list's schedules line; absent where there are none. */
  listSchedules?(): Promise<Schedule[]>;
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
  if (error instanceof ClientError) return error.runnerMessage;
  return error instanceof Error ? error.message : String(error);
}

/** A data source over the runner API: the one `Client`, for requests and for live events. */
export function httpDataSource(options: HttpDataSourceOptions): DataSource {
  const url = options.url.replace(/\/+$/, '');
  const client = new Client({ runnerUrl: url, token: options.token ?? '', fetch: options.fetch });
  return {
    label: url,
    listRuns: (query) => client.list(query),
    listSchedules: () => client.schedules.list(),
    getRun: (id) => client.get(id),
    cancel: (id) => client.cancel(id),
    rerun: (id) => client.rerun(id),
    resume: (id) => client.resume(id),
    subscribe(handlers) {
      const controller = new AbortController();
      void client
        .events({
          bodies: options.bodies,
          signal: controller.signal,
          retryMs: options.retryMs ?? 1000,
          maxRetryMs: (options.retryMs ?? 1000) * 8,
          onEvent: handlers.event,
          // A resumed stream misses nothing, but the dashboards read their snapshot on every
          // open anyway (cheap, and right after a runner restart); a reset asks for the same.
          onOpen: () => handlers.open(),
          onReset: () => handlers.open(),
          onClosed: handlers.closed,
        })
        .catch((error: unknown) => handlers.closed(error instanceof Error ? error : new Error(String(error))));
      return () => controller.abort();
    },
  };
}
