import { ApiError } from '../errors.js';
import { WorkflowHeader } from './headers.js';

/**
 * The QStash API's refusals, as the API's typed errors (`error-response.ts` answers them): the SDK
 * reads only the status (400 for a run that finished: "workflow was finished"), people read the message.
 */

export function badRequest(code: string, message: string): ApiError {
  return new ApiError(400, code, message);
}

/** The 400s that do mean "this run takes no more": the SDK must read them as such. */
const RUN_GONE = new Set(['WORKFLOW_RUN_FINISHED', 'WORKFLOW_RUN_NOT_FOUND']);

/**
 * A refused publish of a running workflow's step (a message that names its run and is not the
 * run's first) answers 422, never 400: the SDK reads any 400 as "the run finished" and stops
 * without a word, which would leave the run running with nothing to send. On 422 it fails the
 * step instead: the delivery is retried and, if the refusal stands, the run fails with its message.
 */
export function asStepRefusal(error: unknown, headerSets: readonly Record<string, unknown>[]): unknown {
  if (!(error instanceof ApiError) || error.status !== 400 || RUN_GONE.has(error.code)) return error;
  const isStep = headerSets.some((headers) => {
    const value = (name: string) => Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
    return typeof value(WorkflowHeader.RunId) === 'string' && value(WorkflowHeader.Init) !== 'true';
  });
  return isStep ? new ApiError(422, error.code, error.message, { cause: error }) : error;
}

/** A publish for a run that is not running: the SDK takes 400 as "the run finished, stop here". */
export function runNotRunning(runId: string, status: string | undefined): ApiError {
  return status === undefined
    ? new ApiError(
        400,
        'WORKFLOW_RUN_NOT_FOUND',
        `No workflow run ${runId}: publish its first message (Upstash-Workflow-Init: true) before its steps.`,
      )
    : new ApiError(400, 'WORKFLOW_RUN_FINISHED', `Workflow run ${runId} is ${status}: it takes no more messages.`);
}

/**
 * An invoke request (`Upstash-Workflow-Invoke: true`) whose invoker cannot take the child's result:
 * no such run (404), a native run (409: its steps are not the QStash engine's to write), or one that
 * finished (400, as for any publish to a finished run: the SDK stops there). Nothing is written.
 */
export function invokerRefused(runId: string, run: { protocol?: string; status: string } | undefined): ApiError {
  if (run === undefined)
    return new ApiError(
      404,
      'INVOKER_NOT_FOUND',
      `The invoke request names invoker run ${runId}, which does not exist: the child workflow was not started.`,
    );
  if (run.protocol !== 'upstash') {
    return new ApiError(
      409,
      'INVOKER_NOT_QSTASH',
      `The invoke request names invoker run ${runId}, a native wfkit run, not a QStash workflow run: the child workflow was not started.`,
    );
  }
  return runNotRunning(runId, run.status);
}
