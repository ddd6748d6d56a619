import type { BulkRequest, BulkResult } from '../../api/bulk.js';
import type { PruneRequest, PruneResult } from '../../api/prune.js';
import { Client } from '../../api/client.js';
import type { Run, RunPage } from '../../api/dto.js';
import type { RunListQuery } from '../../api/run-query.js';
import type { NewScheduleRequest, Schedule } from '../../api/schedule-dto.js';
import { ClientError } from '../../api/errors.js';
import type { RunnerEvent } from '../../api/events.js';
import type { RunDetail } from '../../api/parse.js';
import { CliError } from '../errors.js';

export type { RunDetail } from '../../api/parse.js';

/**
 * The CLI's view of the runner API: the one `Client`, with every `ClientError` turned into a
 * one-line `CliError` here, at the CLI's edge (exit code 4 for a missing run, else 1).
 */
export class RunnerClient {
  readonly baseUrl: string;
  private readonly client: Client;

  constructor(baseUrl: string, token: string | undefined) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.client = new Client({ runnerUrl: this.baseUrl, token: token ?? '' });
  }

  private async call<T>(work: (client: Client) => Promise<T>): Promise<T> {
    try {
      return await work(this.client);
    } catch (error) {
      if (!(error instanceof ClientError)) throw error;
      if (error.status === 0 && error.apiCode === 'UNREACHABLE') {
        throw new CliError(
          1,
          'UNREACHABLE',
          `Cannot reach the runner at ${this.baseUrl} (start it with \`wf dev\`, or set --runner / WF_RUNNER_URL).`,
          { cause: error },
        );
      }
      throw new CliError(error.status === 404 ? 4 : 1, `HTTP_${error.status}`, error.message, { cause: error });
    }
  }

  listRuns(query: RunListQuery = {}): Promise<RunPage> {
    return this.call((c) => c.list(query));
  }

  getRun(id: string): Promise<RunDetail> {
    return this.call((c) => c.get(id));
  }

  createSchedule(request: NewScheduleRequest): Promise<Schedule> {
    return this.call((c) => c.schedules.create(request));
  }

  listSchedules(): Promise<Schedule[]> {
    return this.call((c) => c.schedules.list());
  }

  deleteSchedule(id: string): Promise<void> {
    return this.call((c) => c.schedules.delete(id));
  }

  cancel(id: string): Promise<Run> {
    return this.call((c) => c.cancel(id));
  }

  resume(id: string): Promise<Run> {
    return this.call((c) => c.resume(id));
  }

  prune(request: PruneRequest): Promise<PruneResult> {
    return this.call((c) => c.prune(request));
  }

  bulk(request: BulkRequest): Promise<BulkResult> {
    return this.call((c) => c.bulk(request));
  }

  notify(eventId: string, data: unknown): Promise<{ delivered: string[]; kept: boolean }> {
    return this.call((c) => c.notify(eventId, data));
  }

  /**
   * Follows whole events (`wf logs` prints what the store holds) until `signal` aborts.
   * `onOpen` runs each time the stream opens, before any event of that connection is passed on,
   * so the caller reads its snapshot there and misses nothing committed after; it runs again
   * (`reconnected`) after a reset, when the runner could not replay what was missed. A stream
   * that ends or breaks later is opened again after `retryMs` (doubling up to 8×), resuming
   * after the last event seen; only a first connection that fails is an error.
   */
  follow(
    onEvent: (event: RunnerEvent) => void,
    options: {
      runId?: string;
      signal: AbortSignal;
      onOpen?: (reconnected: boolean) => Promise<void> | void;
      retryMs?: number;
    },
  ): Promise<void> {
    const retryMs = options.retryMs ?? 1_000;
    return this.call((c) =>
      c.events({
        runId: options.runId,
        bodies: true,
        signal: options.signal,
        retryMs,
        maxRetryMs: retryMs * 8,
        retryFirstConnection: false,
        // `bodies: true`: whole events only, never slim ones.
        onEvent: (event) => onEvent(event as RunnerEvent),
        onOpen: ({ reconnected }) => options.onOpen?.(reconnected),
        onReset: () => options.onOpen?.(true),
      }),
    );
  }
}
