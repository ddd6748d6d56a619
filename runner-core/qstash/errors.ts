import { ApiError } from '../errors.js';

/**
 * The QStash API's refusals, as the API's typed errors (`error-response.ts` answers them): the SDK
 * reads only the status (400 for a run that finished: "workflow was finished"), people read the message.
 */

export function badRequest(code: string, message: string): ApiError {
  return new ApiError(400, code, message);
}

/** A publish for a run that is not running: the SDK takes 400 as "the run finished, stop here". */
export function runNotRunning(runId: string, status: string | undefined): ApiError {
  return status === undefined
    ? new ApiError(400, 'WORKFLOW_RUN_NOT_FOUND', `No workflow run ${runId}: publish its first message (Upstash-Workflow-Init: true) before its steps.`)
    : new ApiError(400, 'WORKFLOW_RUN_FINISHED', `Workflow run ${runId} is ${status}: it takes no more messages.`);
}
