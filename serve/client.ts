import { toMilliseconds, type Duration } from '../protocol/duration.js';
import { WorkflowError } from '../protocol/errors.js';
import { DEFAULT_RUNNER_URL } from './core/options.js';
import type { Attempt, Run, RunPage, RunStatus, Step } from '../runner-core/store/types.js';

export type { Attempt, Run, RunPage, RunStatus, Step } from '../runner-core/store/types.js';

export interface ClientOptions {
  /** @default env WF_RUNNER_URL, else http://127.0.0.1:7766 */
  runnerUrl?: string;
  /** @default env WF_TOKEN (or SERVICE_TOKEN) */
  token?: string;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch;
}

export interface TriggerOptions {
  /** The workflow route's public URL. */
  url: string;
  /** The payload; a string is sent as is, anything else as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Retries of a failing step. @default 3 */
  retries?: number;
  /** Backoff base: milliseconds, or a string like "2s". @default 1000 */
  retryDelay?: Duration;
  /** Start later: seconds, or a string like "10m". */
  delay?: Duration;
  /** Repeated triggers with the same key start one run. */
  idempotencyKey?: string;
}

export interface RunDetail {
  run: Run;
  steps: Step[];
  attempts: Attempt[];
}

/** A runner API call failed; `status` and `code` are the runner's, the message says what went wrong. */
export class ClientError extends WorkflowError {
  override name = 'ClientError';
  readonly status: number;
  readonly apiCode: string;
  constructor(status: number, apiCode: string, message: string, options?: ErrorOptions) {
    super('RUNNER', message, options);
    this.status = status;
    this.apiCode = apiCode;
  }
}

function fromEnv(...names: string[]): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  for (const name of names) if (env[name]) return env[name];
  return undefined;
}

/**
 * A typed client of the runner API, for Node and edge runtimes (fetch only).
 * @example
 * const client = new Client();
 * const { workflowRunId } = await client.trigger({ url: "https://app.example/workflow", body: { text: "hi" } });
 * await client.notify("order-42-paid", { amount: 10 });
 */
export class Client {
  readonly runnerUrl: string;
  private readonly token: string | undefined;
  private readonly fetcher: typeof fetch;

  constructor(options: ClientOptions = {}) {
    this.runnerUrl = (options.runnerUrl ?? fromEnv('WF_RUNNER_URL') ?? DEFAULT_RUNNER_URL).replace(/\/+$/, '');
    this.token = options.token ?? fromEnv('WF_TOKEN', 'SERVICE_TOKEN');
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** Starts a run of the workflow at `url` directly on the runner. */
  async trigger(options: TriggerOptions): Promise<{ workflowRunId: string }> {
    const body = options.body === undefined ? '' : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    const start: Record<string, unknown> = { url: options.url, body, headers: options.headers ?? {} };
    if (options.retries !== undefined) start.retries = options.retries;
    if (options.retryDelay !== undefined) start.retryDelayMs = toMilliseconds(options.retryDelay, '`retryDelay`', 'milliseconds');
    if (options.delay !== undefined) start.delayMs = toMilliseconds(options.delay, '`delay`');
    if (options.idempotencyKey !== undefined) start.idempotencyKey = options.idempotencyKey;
    return this.request('POST', '/v1/runs', start);
  }

  /** One run with its steps and every attempt's log. */
  get(runId: string): Promise<RunDetail> {
    return this.request('GET', `/v1/runs/${encodeURIComponent(runId)}`);
  }

  /** Runs, newest first; pass `nextCursor` back as `cursor` for the next page. */
  list(query: { status?: RunStatus; cursor?: string; limit?: number } = {}): Promise<RunPage> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
    return this.request('GET', `/v1/runs${params.size > 0 ? `?${params}` : ''}`);
  }

  async cancel(runId: string): Promise<Run> {
    return (await this.request<{ run: Run }>('POST', `/v1/runs/${encodeURIComponent(runId)}/cancel`)).run;
  }

  /** Starts a new run with the same route, payload and headers. */
  async rerun(runId: string): Promise<Run> {
    return (await this.request<{ run: Run }>('POST', `/v1/runs/${encodeURIComponent(runId)}/rerun`)).run;
  }

  /** Delivers `data` to every `waitForEvent(…, eventId)`; kept for a while if none waits yet. */
  notify(eventId: string, data?: unknown): Promise<{ delivered: string[]; kept: boolean }> {
    return this.request('POST', `/v1/events/${encodeURIComponent(eventId)}`, { data });
  }

  /** Every drive attempt of a run: request and response headers and bodies, status, error. */
  async logs(runId: string): Promise<Attempt[]> {
    return (await this.get(runId)).attempts;
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const url = this.runnerUrl + path;
    const headers: Record<string, string> = {};
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetcher(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      throw new ClientError(0, 'UNREACHABLE', `Cannot reach the wfkit runner at ${this.runnerUrl} (${method} ${path}): ${(error as Error).message}`, { cause: error });
    }
    const text = await response.text();
    if (!response.ok) {
      let code = `HTTP_${response.status}`;
      let message = text.slice(0, 500);
      try {
        const error = (JSON.parse(text) as { error: { code: string; message: string } }).error;
        code = error.code;
        message = error.message;
      } catch {}
      throw new ClientError(response.status, code, `The runner answered ${method} ${path} with ${response.status}: ${message}`);
    }
    return JSON.parse(text) as T;
  }
}
