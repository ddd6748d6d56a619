import { WorkflowError } from '../protocol/errors.js';

/**
 * The one error of the runner API's client: the runner answered with an error, could not be
 * reached (`status` 0, `apiCode` `UNREACHABLE`), or answered something the contract does not
 * allow (`apiCode` `BAD_ANSWER`). `status` and `apiCode` are the runner's when it answered; the
 * message says what went wrong. Callers map it at their own edge (the CLI to its `CliError`).
 */
export class ClientError extends WorkflowError {
  override name = 'ClientError';
  readonly status: number;
  readonly apiCode: string;
  /** The runner's own words (its `error.message`) when it answered one; else the whole message. For UIs that show where it happened elsewhere. */
  readonly runnerMessage: string;
  constructor(status: number, apiCode: string, message: string, options?: ErrorOptions & { runnerMessage?: string }) {
    super('RUNNER', message, options);
    this.status = status;
    this.apiCode = apiCode;
    this.runnerMessage = options?.runnerMessage ?? message;
  }
}
