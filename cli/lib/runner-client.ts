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

  /** Follows `GET /v1/events` until `signal` aborts; calls `onEvent` for each event. */
  async follow(onEvent: (event: RunnerEvent) => void, options: { runId?: string; signal: AbortSignal; onOpen?: () => void }): Promise<void> {
    const qs = options.runId ? `?runId=${encodeURIComponent(options.runId)}` : '';
    let response: Response;
    try {
      response = await this.request(`/v1/events${qs}`, { signal: options.signal });
    } catch (error) {
      if (options.signal.aborted) return;
      throw error;
    }
    options.onOpen?.();
    const parser = createParser({ onEvent: (message) => onEvent(JSON.parse(message.data) as RunnerEvent) });
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch (error) {
      if (!options.signal.aborted) throw new CliError(1, 'STREAM', `The runner's event stream broke: ${(error as Error).message}`, { cause: error });
    }
  }
}
