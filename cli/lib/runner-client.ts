import { createParser } from 'eventsource-parser';
import type { RunnerEvent } from '../../runner-core/events.js';
import type { Attempt, Run, RunPage, Step } from '../../runner-core/store/types.js';
import { CliError } from '../errors.js';

export interface RunDetail {
  run: Run;
  steps: Step[];
  attempts: Attempt[];
}

/** The CLI's view of the runner API; every failure becomes a one-line CliError. */
export class RunnerClient {
  readonly baseUrl: string;
  private readonly token: string | undefined;

  constructor(baseUrl: string, token: string | undefined) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.token = token;
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
    if (!response.ok) {
      const text = await response.text();
      let message = text;
      try {
        message = (JSON.parse(text) as { error: { message: string } }).error.message;
      } catch {}
      throw new CliError(response.status === 404 ? 4 : 1, `HTTP_${response.status}`, `The runner answered ${response.status}: ${message}`);
    }
    return response;
  }

  async listRuns(query: { status?: string; limit?: number; cursor?: string } = {}): Promise<RunPage> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
    const qs = params.size > 0 ? `?${params}` : '';
    return (await (await this.request(`/v1/runs${qs}`)).json()) as RunPage;
  }

  async getRun(id: string): Promise<RunDetail> {
    return (await (await this.request(`/v1/runs/${encodeURIComponent(id)}`)).json()) as RunDetail;
  }

  async cancel(id: string): Promise<Run> {
    return ((await (await this.request(`/v1/runs/${encodeURIComponent(id)}/cancel`, { method: 'POST' })).json()) as { run: Run }).run;
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
