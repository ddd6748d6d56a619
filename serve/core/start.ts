import { WorkflowError } from '../../protocol/errors.js';
import { Header, headersToObject, redactHeaders } from '../../protocol/headers.js';
import { resolveFlowControl, type FlowControlOptions } from '../../protocol/flow-control.js';
import type { StartRequest } from '../../protocol/messages.js';
import { parseJson } from '../../protocol/validate.js';
import { errorResponse } from './http.js';

export interface StartInput {
  request: Request;
  body: string;
  workflowUrl: string;
  runnerUrl: string;
  token: string;
  retries?: number;
  retryDelayMs?: number;
  /** The route's flow control; its key is resolved here, against this start's payload. */
  flowControl?: FlowControlOptions<any>;
}

/**
 * A client's POST without a runner signature: validate the payload, ask the runner for a run,
 * answer `{ workflowRunId }`. The workflow itself runs later, on the runner's signed request.
 */
export async function startRun(input: StartInput): Promise<Response> {
  const payload = input.body.trim() !== '' ? parseJson(input.body, 'the request body') : undefined; // 400 now, not a failed run later
  const message: StartRequest = {
    url: input.workflowUrl,
    body: input.body,
    headers: redactHeaders(headersToObject(input.request.headers)),
  };
  if (input.retries !== undefined) message.retries = input.retries;
  if (input.retryDelayMs !== undefined) message.retryDelayMs = input.retryDelayMs;
  const key = input.request.headers.get(Header.IdempotencyKey);
  if (key) message.idempotencyKey = key;
  if (input.flowControl) message.flowControl = resolveFlowControl(input.flowControl, payload);

  const target = `${input.runnerUrl}/v1/runs`;
  let response: Response;
  try {
    response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${input.token}` },
      body: JSON.stringify(message),
    });
  } catch (error) {
    throw new WorkflowError('RUNNER', `Could not reach the wfkit runner at ${target} (is \`wf dev\` running? WF_RUNNER_URL sets where): ${(error as Error).message}`, { cause: error });
  }
  const text = await response.text();
  if (!response.ok) {
    let detail = text;
    try {
      detail = (JSON.parse(text) as { error?: { message?: string } }).error?.message ?? text;
    } catch {}
    return errorResponse(502, 'RUNNER', `The runner at ${target} refused to start the run (${response.status}): ${detail}`);
  }
  return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
}
