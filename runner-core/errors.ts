import { WorkflowError } from '../protocol/errors.js';

/** The route answered with a status that is not the outcome stream. */
export class EndpointError extends WorkflowError {
  override name = 'EndpointError';
  readonly status: number;
  readonly url: string;
  constructor(status: number, url: string, detail: string) {
    super('RUNNER', `Endpoint POST ${url} responded ${status}${detail ? `: ${detail}` : ''}`);
    this.status = status;
    this.url = url;
  }
}

/** The route did not answer, or stopped streaming, within the dispatch timeouts. */
export class EndpointTimeoutError extends WorkflowError {
  override name = 'EndpointTimeoutError';
  readonly url: string;
  constructor(url: string, options?: ErrorOptions) {
    super('RUNNER', `Endpoint POST ${url} timed out`, options);
    this.url = url;
  }
}

/** An HTTP API error with its status; the API answers `{ error: { code, message } }`. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.status = status;
    this.code = code;
  }
}

/**
 * A start names a route whose origin the runner's operator did not allow (`allowedOrigins`,
 * `--allow-origin`, `WF_ALLOWED_ORIGINS`). The API answers it 403 `ORIGIN_NOT_ALLOWED`.
 */
export class OriginNotAllowedError extends Error {
  override name = 'OriginNotAllowedError';
  readonly origin: string;
  constructor(url: string, allowed: readonly string[]) {
    const origin = originOf(url);
    super(
      `The runner may not call ${origin} (the start's url ${url}): it calls only the origins its operator allowed` +
        ` (${allowed.length === 0 ? 'none' : allowed.join(', ')}). To allow it, start the runner with --allow-origin ${origin}` +
        ` or WF_ALLOWED_ORIGINS=${origin} (patterns like https://*.example.com and http://127.0.0.1:* work too).`,
    );
    this.origin = origin;
  }
}

function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** No run has this id. The API answers it 404 `NOT_FOUND`. */
export class RunNotFoundError extends Error {
  override name = 'RunNotFoundError';
  readonly runId: string;
  constructor(runId: string) {
    super(`No run with id ${runId}.`);
    this.runId = runId;
  }
}

/** The action needs an unfinished run, and this one has ended. The API answers it 409 `FINISHED`. */
export class RunFinishedError extends Error {
  override name = 'RunFinishedError';
  readonly runId: string;
  readonly status: string;
  constructor(runId: string, status: string) {
    super(`Run ${runId} is already ${status}.`);
    this.runId = runId;
    this.status = status;
  }
}

/**
 * Resume needs a run that ended `failed` or `cancelled` (the only ones with a step to start again
 * from). The API answers it 409 `NOT_RESUMABLE`.
 */
export class RunNotResumableError extends Error {
  override name = 'RunNotResumableError';
  readonly runId: string;
  readonly status: string;
  constructor(runId: string, status: string) {
    super(`Expected run ${runId} to be failed or cancelled to resume it, but it is ${status}.`);
    this.runId = runId;
    this.status = status;
  }
}

/**
 * Resume and rerun drive a run with the runner's own protocol; a run an `@upstash/workflow` app
 * started lives on its QStash messages instead (runner-core/qstash/). The API answers it 409 `UPSTASH_RUN`.
 */
export class UpstashRunActionError extends Error {
  override name = 'UpstashRunActionError';
  readonly runId: string;
  constructor(runId: string, action: 'resume' | 'rerun') {
    super(
      `Run ${runId} is an @upstash/workflow run: the runner cannot ${action} it. Start a new one from the app (Client.trigger), or cancel it.`,
    );
    this.runId = runId;
  }
}

/** `createRunner` could not open its database (`database` is shown with its password redacted). */
export class DatabaseOpenError extends Error {
  override name = 'DatabaseOpenError';
  readonly database: string;
  constructor(database: string, options?: ErrorOptions) {
    const detail = options?.cause instanceof Error ? options.cause.message : String(options?.cause ?? 'unknown error');
    super(`Cannot open the database ${database}: ${detail}`, options);
    this.database = database;
  }
}

/** `createRunner`'s options do not make a runner (no token, a malformed origin pattern, …). */
export class RunnerConfigError extends Error {
  override name = 'RunnerConfigError';
}
