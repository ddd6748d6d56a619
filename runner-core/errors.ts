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
