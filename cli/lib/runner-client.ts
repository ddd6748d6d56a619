import { createParser } from 'eventsource-parser';
import type { RunnerEvent } from '../../runner-core/events.js';
import type { Run, RunPage } from '../../runner-core/store/types.js';
import { Client, ClientError, type RunDetail } from '../../serve/client.js';
import { CliError } from '../errors.js';

export type { RunDetail } from '../../serve/client.js';

/** The CLI's view of the runner API: the public `Client`, with every failure as a one-line CliError. */
export class RunnerClient {
  readonly baseUrl: string;
  private readonly token: string | undefined;
  private readonly client: Client;

  constructor(baseUrl: string, token: string | undefined) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.token = token;
    this.client = new Client({ runnerUrl: this.baseUrl, token: token ?? '' });
  }

  private async call<T>(work: (client: Client) => Promise<T>): Promise<T> {
    try {
      return await work(this.client);
    } catch (error) {
      if (!(error instanceof ClientError)) throw error;
      if (error.status === 0) {
        throw new CliError(1, 'UNREACHABLE', `Cannot reach the runner at ${this.baseUrl} (start it with \`wf dev\`, or set --runner / WF_RUNNER_URL).`, { cause: error });
      }
      throw new CliError(error.status === 404 ? 4 : 1, `HTTP_${error.status}`, error.message, { cause: error });
    }
  }

  listRuns(query: { status?: string; limit?: number; cursor?: string } = {}): Promise<RunPage> {
    return this.call((c) => c.list(query as Parameters<Client['list']>[0]));
  }

  getRun(id: string): Promise<RunDetail> {
    return this.call((c) => c.get(id));
  }

  cancel(id: string): Promise<Run> {
    return this.call((c) => c.cancel(id));
  }

  notify(eventId: string, data: unknown): Promise<{ delivered: string[]; kept: boolean }> {
    return this.call((c) => c.notify(eventId, data));
  }

  private async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.token) headers.set('authorization', `Bearer ${this.token}`);
    let response: Response;
    try {
      response = await fetch(this.baseUrl + path, { ...init, headers });
    } catch (error) {
      throw new CliError(1, 'UNREACHABLE', `Cannot reach the runner at ${this.baseUrl} (start it with \`wf dev\`, or set --runner / WF_RUNNER_URL).`, { cause: error });
    }
    if (!response.ok) throw new CliError(1, `HTTP_${response.status}`, `The runner answered ${response.status} to ${path}.`);
    return response;
  }

  /**
   * Follows `GET /v1/events?bodies=1` (whole events: `wf logs` prints what the store holds) until
   * `signal` aborts. `onOpen` runs each time the stream opens, before any event of that
   * connection is passed on, so the caller reads its snapshot there and misses nothing committed
   * after. A stream that ends or breaks later (the runner restarted, or this reader fell a buffer
   * behind) is opened again after `retryMs` (doubling up to 8×); only a first connection that
   * fails is an error.
   */
  async follow(
    onEvent: (event: RunnerEvent) => void,
    options: { runId?: string; signal: AbortSignal; onOpen?: (reconnected: boolean) => Promise<void> | void; retryMs?: number },
  ): Promise<void> {
    const params = new URLSearchParams({ bodies: '1' });
    if (options.runId) params.set('runId', options.runId);
    const { signal } = options;
    const retryMs = options.retryMs ?? 1_000;
    let opened = 0;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const response = await this.request(`/v1/events?${params}`, { signal });
        await options.onOpen?.(opened++ > 0);
        failures = 0;
        await this.read(response, onEvent, signal);
      } catch (error) {
        if (signal.aborted) return;
        if (opened === 0) throw error;
      }
      if (signal.aborted) return;
      const wait = retryMs * 2 ** Math.min(failures++, 3);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, wait);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    }
  }

  /** Passes on the events of one open stream until it ends, breaks or `signal` aborts. */
  private async read(response: Response, onEvent: (event: RunnerEvent) => void, signal: AbortSignal): Promise<void> {
    const parser = createParser({ onEvent: (message) => !signal.aborted && onEvent(JSON.parse(message.data) as RunnerEvent) });
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  }
}
