import { WorkflowError } from '../../protocol/errors.js';
import {
  ApiError,
  OriginNotAllowedError,
  RunFinishedError,
  RunNotFoundError,
  RunNotResumableError,
  UpstashRunActionError,
} from '../errors.js';
import { EgressRefusedError } from '../egress/destinations.js';
import { InvalidScheduleError } from '../schedules/cron.js';
import { describeError, type Logger } from '../telemetry/logger.js';
import { errorResponse } from './http-io.js';

/** An API error that needs headers beside its body: `Allow` on a 405, `Retry-After` on a 429. */
export class ApiErrorWithHeaders extends ApiError {
  override name = 'ApiErrorWithHeaders';
  readonly headers: Record<string, string>;
  constructor(status: number, code: string, message: string, headers: Record<string, string>) {
    super(status, code, message);
    this.headers = headers;
  }
}

/** Error codes of WorkflowErrors that are the caller's input, not the runner's failure. */
const BAD_INPUT_CODES: ReadonlySet<string> = new Set(['PROTOCOL', 'SERIALIZATION']);

/**
 * Any failure as the error the client sees: the one place domain errors become statuses. Only a
 * failure of the runner itself is a 500, and it is logged, not shown.
 */
export function toApiError(error: unknown, logger: Logger): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof RunNotFoundError) return new ApiError(404, 'NOT_FOUND', error.message);
  if (error instanceof RunFinishedError) return new ApiError(409, 'FINISHED', error.message);
  if (error instanceof RunNotResumableError) return new ApiError(409, 'NOT_RESUMABLE', error.message);
  if (error instanceof UpstashRunActionError) return new ApiError(409, 'UPSTASH_RUN', error.message);
  if (error instanceof OriginNotAllowedError) return new ApiError(403, 'ORIGIN_NOT_ALLOWED', error.message);
  if (error instanceof EgressRefusedError) return new ApiError(403, 'EGRESS_REFUSED', error.message);
  if (error instanceof InvalidScheduleError) return new ApiError(400, 'BAD_REQUEST', error.message);
  if (WorkflowError.is(error) && BAD_INPUT_CODES.has(error.code))
    return new ApiError(400, 'BAD_REQUEST', error.message);
  logger.error(`API error: ${describeError(error)}`);
  return new ApiError(500, 'INTERNAL', 'The runner failed to handle this request; its log has the details.');
}

/** The JSON response for any failure (see {@link toApiError}). */
export function failureResponse(error: unknown, logger: Logger): Response {
  const apiError = toApiError(error, logger);
  return errorResponse(apiError, apiError instanceof ApiErrorWithHeaders ? apiError.headers : {});
}
