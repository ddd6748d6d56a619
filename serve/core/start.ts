import { WorkflowError } from '../../protocol/errors.js';
import { Header, headersToObject, redactHeaders } from '../../protocol/headers.js';
import { resolveFlowControl, type FlowControlOptions } from '../../protocol/flow-control.js';
import type { StartRequest } from '../../protocol/messages.js';
import { parseJson } from '../../protocol/validate.js';
import { errorResponse } from './http.js';
import { runnerFetch, type RunnerAnswer } from './runner-fetch.js';
import { toValidationIssue, type StandardSchemaV1 } from './schema.js';

export interface StartInput {
  request: Request;
  body: string;
  workflowUrl: string;
  /** What named `workflowUrl` (`WF_WORKFLOW_URL`, `VERCEL_URL (Vercel)`, `the request's Host header`), for messages. */
  urlSource?: string;
  runnerUrl: string;
  token: string;
  retries?: number;
  retryDelayMs?: number;
  /** The route's `schema` option: the start body must pass it, and its output is what the run keeps. */
  schema?: StandardSchemaV1;
  /** The route's flow control; its key is resolved here, against this start's (validated) payload. */
  flowControl?: FlowControlOptions<any>;
}

/**
 * A client's POST without a runner signature: validate the payload, ask the runner for a run,
 * answer `{ workflowRunId }`. The workflow itself runs later, on the runner's signed request.
 */
export async function startRun(input: StartInput): Promise<Response> {
  const payload = input.body.trim() !== '' ? parseJson(input.body, 'the request body') : undefined; // 400 now, not a failed run later
  let body = input.body;
  let value = payload;
  if (input.schema) {
    const checked = await checkPayload(input.schema, payload);
    if (checked instanceof Response) return checked;
    // The run keeps the validated (possibly transformed) value, so replays see it without validating
    // again: a validator need not be deterministic, and a schema changed mid-run cannot fail old runs.
    value = checked.value;
    if (checked.value !== payload) body = serializePayload(checked.value, input.schema);
  }
  const message: StartRequest = {
    url: input.workflowUrl,
    body,
    headers: redactHeaders(headersToObject(input.request.headers)),
  };
  if (input.retries !== undefined) message.retries = input.retries;
  if (input.retryDelayMs !== undefined) message.retryDelayMs = input.retryDelayMs;
  const key = input.request.headers.get(Header.IdempotencyKey);
  if (key) message.idempotencyKey = key;
  // The key is a function of what the run starts with: the validated value when a schema checked it.
  if (input.flowControl) message.flowControl = resolveFlowControl(input.flowControl, value);

  const target = `${input.runnerUrl}/v1/runs`;
  let response: RunnerAnswer;
  try {
    response = await runnerFetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${input.token}` },
      body: JSON.stringify(message),
    });
  } catch (error) {
    throw new WorkflowError(
      'RUNNER',
      `Could not reach the wfkit runner at ${target} (is \`wf dev\` running? WF_RUNNER_URL sets where): ${(error as Error).message}`,
      { cause: error },
    );
  }
  const text = await response.text();
  if (!response.ok) {
    const refusal = runnerError(text);
    if (response.status === 403 && refusal.code === 'ORIGIN_NOT_ALLOWED') return originRefused(input, refusal.message);
    return errorResponse(
      502,
      'RUNNER',
      `The runner at ${target} refused to start the run (${response.status}): ${refusal.message}`,
    );
  }
  return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
}

/** The runner's `{ error: { code, message } }`, or the raw text as the message. */
function runnerError(text: string): { code?: string; message: string } {
  try {
    const error = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    return {
      code: typeof error?.code === 'string' ? error.code : undefined,
      message: typeof error?.message === 'string' ? error.message : text,
    };
  } catch {
    return { message: text };
  }
}

/**
 * The runner will not call the origin this start named (its operator did not allow it): the
 * client's answer is that refusal, 403, naming the origin, where the route got it, and the runner
 * setting that allows it. Not a 5xx: nothing broke, and a forged Host ends here, with no run and no
 * request sent to the origin it named.
 */
function originRefused(input: StartInput, runnerMessage: string): Response {
  const origin = new URL(input.workflowUrl).origin;
  const from = input.urlSource ? ` (from ${input.urlSource})` : '';
  return errorResponse(
    403,
    'ORIGIN_NOT_ALLOWED',
    `The runner does not call ${origin}${from}: its operator did not allow that origin, so no run was started. ` +
      `If ${origin} is this app, start the runner with --allow-origin ${origin} (or WF_ALLOWED_ORIGINS), or set WF_WORKFLOW_URL to an origin it allows. ` +
      `The runner said: ${runnerMessage}`,
  );
}

/** Runs the schema; a failure is the 400 answer (no run is started), a success the value to keep. */
async function checkPayload(schema: StandardSchemaV1, payload: unknown): Promise<{ value: unknown } | Response> {
  const result = await schema['~standard'].validate(payload);
  if (!result.issues) return { value: result.value };
  const issues = result.issues.map(toValidationIssue);
  const listed = issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
  const vendor = schema['~standard'].vendor;
  return Response.json(
    {
      error: {
        code: 'VALIDATION',
        message: `The request body does not match this route's schema (${vendor}): ${listed}`,
        issues,
      },
    },
    { status: 400 },
  );
}

/** The validated value as the run's JSON body; a value JSON cannot carry is the route's bug (500). */
function serializePayload(value: unknown, schema: StandardSchemaV1): string {
  if (value === undefined) return '';
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new WorkflowError(
      'CONFIG',
      `Expected the \`schema\` (${schema['~standard'].vendor}) to produce a JSON value for the run's payload, but serializing it failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (text === undefined)
    throw new WorkflowError(
      'CONFIG',
      `Expected the \`schema\` (${schema['~standard'].vendor}) to produce a JSON value for the run's payload, got ${typeof value}.`,
    );
  return text;
}
