import { resolveFlowControl, type FlowControlOptions } from '../protocol/flow-control.js';
import { toMilliseconds, type Duration } from '../protocol/duration.js';
import { parseJson } from '../protocol/validate.js';
import { parseBulkResult, type BulkRequest, type BulkResult } from './bulk.js';
import { parsePruneResult, type PruneRequest, type PruneResult } from './prune.js';
import { parseStoreInfo, type StoreInfo } from './store-info.js';
import type { Attempt, Run, RunPage } from './dto.js';
import { ClientError } from './errors.js';
import { runQueryParams, type RunListQuery } from './run-query.js';
import { parseSchedule, parseScheduleList, type NewScheduleRequest, type Schedule } from './schedule-dto.js';
import { followEvents, type EventsOptions } from './follow.js';
import { DEFAULT_RUNNER_URL } from './runner-url.js';
import {
  parseNotifyAnswer,
  parseRunAnswer,
  parseRunDetail,
  parseRunPage,
  parseSession,
  parseTriggerAnswer,
  type RunDetail,
} from './parse.js';

export type { RunDetail } from './parse.js';
export type { NewScheduleRequest, Schedule } from './schedule-dto.js';
export type { EventsOptions } from './follow.js';

export { DEFAULT_RUNNER_URL } from './runner-url.js';

export interface ClientOptions {
  /** The runner's base URL; `''` for the page's own origin (the web dashboard). @default env WF_RUNNER_URL, else http://127.0.0.1:7766 */
  runnerUrl?: string;
  /** The bearer token, or a function read on every request (a page that signs in and out). @default env WF_TOKEN (or SERVICE_TOKEN) */
  token?: string | (() => string | null | undefined);
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
  /** Limits shared by the runs of `key` (a function gets `body`). @example { key: "tenant-42", parallelism: 5 } */
  flowControl?: FlowControlOptions<any>;
}

function fromEnv(...names: string[]): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  for (const name of names) if (env[name]) return env[name];
  return undefined;
}

/**
 * The one client of the runner API, for Node, browsers and edge runtimes (fetch only): what apps,
 * the CLI and both dashboards use. Every answer is checked against the contract (`parse.ts`);
 * every failure is a `ClientError`.
 * @example
 * const client = new Client();
 * const { workflowRunId } = await client.trigger({ url: "https://app.example/workflow", body: { text: "hi" } });
 * await client.notify("order-42-paid", { amount: 10 });
 */
export class Client {
  readonly runnerUrl: string;
  private readonly token: () => string | null | undefined;
  private readonly fetcher: typeof fetch;

  constructor(options: ClientOptions = {}) {
    this.runnerUrl = (options.runnerUrl ?? fromEnv('WF_RUNNER_URL') ?? DEFAULT_RUNNER_URL).replace(/\/+$/, '');
    const token = options.token ?? fromEnv('WF_TOKEN', 'SERVICE_TOKEN');
    this.token = typeof token === 'function' ? token : () => token;
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** Starts a run of the workflow at `url` directly on the runner. */
  async trigger(options: TriggerOptions): Promise<{ workflowRunId: string }> {
    const body =
      options.body === undefined ? '' : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    const start: Record<string, unknown> = { url: options.url, body, headers: options.headers ?? {} };
    if (options.retries !== undefined) start.retries = options.retries;
    if (options.retryDelay !== undefined)
      start.retryDelayMs = toMilliseconds(options.retryDelay, '`retryDelay`', 'milliseconds');
    if (options.delay !== undefined) start.delayMs = toMilliseconds(options.delay, '`delay`');
    if (options.idempotencyKey !== undefined) start.idempotencyKey = options.idempotencyKey;
    if (options.flowControl !== undefined) start.flowControl = resolveFlowControl(options.flowControl, options.body);
    return this.request('POST', '/v1/runs', parseTriggerAnswer, start);
  }

  /** One run with its steps, every attempt's log and what its steps printed (`logs`). */
  get(runId: string): Promise<RunDetail> {
    return this.request('GET', `/v1/runs/${encodeURIComponent(runId)}`, parseRunDetail);
  }

  /** Runs, newest first, that match the filters (`api/run-query.ts`); pass `nextCursor` back as `cursor` for the next page. `scheduleId`: only the runs that schedule started. */
  list(query: RunListQuery = {}): Promise<RunPage> {
    const params = runQueryParams(query);
    return this.request('GET', `/v1/runs${params.size > 0 ? `?${params}` : ''}`, parseRunPage);
  }

  /** Cancels a run; answers it as it is now. */
  cancel(runId: string): Promise<Run> {
    return this.request('POST', `/v1/runs/${encodeURIComponent(runId)}/cancel`, parseRunAnswer);
  }

  /** Starts a new run with the same route, payload and headers; answers the new run. */
  rerun(runId: string): Promise<Run> {
    return this.request('POST', `/v1/runs/${encodeURIComponent(runId)}/rerun`, parseRunAnswer);
  }

  /** Starts a failed or cancelled run again at the step that failed; its succeeded steps do not run again. */
  resume(runId: string): Promise<Run> {
    return this.request('POST', `/v1/runs/${encodeURIComponent(runId)}/resume`, parseRunAnswer);
  }

  /**
   * Resumes, cancels or reruns every run `filter` matches (at most 10,000 a call); `dryRun` only counts them.
   * @example const { matched } = await client.bulk({ action: 'resume', filter: { status: 'failed' }, dryRun: true });
   */
  bulk(request: BulkRequest): Promise<BulkResult> {
    return this.request('POST', '/v1/runs/bulk', parseBulkResult, request);
  }

  /**
   * Deletes runs that finished at least `olderThanMs` ago and owe nothing, with their rows; at most
   * `maxRuns` a call: call again with the answer's `cursor` until it is null. `dryRun` only counts.
   * @example let r = await client.prune({ olderThanMs: 7 * 86_400_000, dryRun: true });
   */
  prune(request: PruneRequest): Promise<PruneResult> {
    return this.request('POST', '/v1/prune', parsePruneResult, request);
  }

  /** How big the runner's database is and how long it keeps finished runs (the dashboard's footer). */
  storeInfo(): Promise<StoreInfo> {
    return this.request('GET', '/v1/store', parseStoreInfo);
  }

  /** Delivers `data` to every `waitForEvent(…, eventId)`; kept for a while if none waits yet. */
  notify(eventId: string, data?: unknown): Promise<{ delivered: string[]; kept: boolean }> {
    return this.request('POST', `/v1/events/${encodeURIComponent(eventId)}`, parseNotifyAnswer, { data });
  }

  /** Every drive attempt of a run: request and response headers and bodies, status, error. */
  /**
   * Cron schedules that start a workflow route with a body.
   * @example
   * await client.schedules.create({ url: "https://app.example/workflow", cron: "0 9 * * 1-5", body: { report: "daily" }, timezone: "Europe/Paris" });
   */
  readonly schedules = {
    /** `body` as in `trigger`: a string as is, anything else as JSON. */
    create: (options: Omit<NewScheduleRequest, 'body'> & { body?: unknown }): Promise<Schedule> =>
      this.request('POST', '/v1/schedules', parseSchedule, {
        ...options,
        body:
          options.body === undefined || typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
      }),
    list: async (): Promise<Schedule[]> => (await this.request('GET', '/v1/schedules', parseScheduleList)).schedules,
    delete: async (id: string): Promise<void> => {
      await this.request('DELETE', `/v1/schedules/${encodeURIComponent(id)}`, (u) => u);
    },
  };

  async logs(runId: string): Promise<Attempt[]> {
    return (await this.get(runId)).attempts;
  }

  /** Whether reads need a token here (the runner's own rule; the web dashboard's login form asks). */
  session(): Promise<{ needsToken: boolean }> {
    return this.request('GET', '/v1/session', parseSession);
  }

  /**
   * Follows `GET /v1/events` until `signal` aborts: reconnects with backoff when the stream ends
   * or breaks, resuming after the last event it saw (`Last-Event-ID`), so nothing is missed or
   * repeated; when the runner no longer holds what was missed, `onReset` says to read the
   * snapshot again. Resolves when aborted; rejects with a `ClientError` when retrying cannot help
   * (a 4xx such as 401), or when the first connection fails and `retryFirstConnection` is false.
   * @example await client.events({ onEvent: (e) => console.log(e.type), signal });
   */
  events(options: EventsOptions): Promise<void> {
    return followEvents(options, (path, init) => this.send('GET', path, init));
  }

  /** Sends a request with the token; a failed one (unreachable, non-2xx) is a `ClientError`. */
  private async send(
    method: string,
    path: string,
    init: { body?: string; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    const token = this.token();
    if (token) headers.authorization = `Bearer ${token}`;
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await this.fetcher(this.runnerUrl + path, { method, headers, body: init.body, signal: init.signal });
    } catch (error) {
      throw new ClientError(
        0,
        'UNREACHABLE',
        `Cannot reach the wfkit runner at ${this.runnerUrl || 'this origin'} (${method} ${path}): ${(error as Error).message}`,
        { cause: error },
      );
    }
    if (response.ok) return response;
    const text = await response.text().catch(() => '');
    let code = `HTTP_${response.status}`;
    let message = text.slice(0, 500);
    try {
      const error = (JSON.parse(text) as { error: { code: string; message: string } }).error;
      if (typeof error.code === 'string' && typeof error.message === 'string') ({ code, message } = error);
    } catch {}
    throw new ClientError(
      response.status,
      code,
      `The runner answered ${method} ${path} with ${response.status}: ${message}`,
      { runnerMessage: message },
    );
  }

  private async request<T>(
    method: string,
    path: string,
    parse: (u: unknown, where: string) => T,
    body?: unknown,
  ): Promise<T> {
    const response = await this.send(method, path, body === undefined ? {} : { body: JSON.stringify(body) });
    const where = `the answer to ${method} ${path}`;
    try {
      return parse(parseJson(await response.text(), where), where);
    } catch (error) {
      throw new ClientError(
        response.status,
        'BAD_ANSWER',
        `The runner's answer broke the API contract: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
}
