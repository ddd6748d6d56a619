import { Header, NDJSON } from '../../protocol/headers.js';
import { parseDriveRequest, parseStepRecords, type DriveRequest, type StepRecord } from '../../protocol/messages.js';
import { encodeOutcome, type Outcome } from '../../protocol/outcome.js';
import { WorkflowError, serializeError, type SerializedError } from '../../protocol/errors.js';
import type { TraceContext } from '../../protocol/trace-context.js';
import { parseJson } from '../../protocol/validate.js';
import { createContext, type Workflow } from './context.js';
import type { ServeOptions } from './options.js';
import { runnerFetch, type RunnerAnswer } from './runner-fetch.js';
import { DriveSession } from './session.js';

export interface DriveInput {
  body: string;
  workflow: Workflow<any, any>;
  workflowUrl: string;
  runnerUrl: string;
  token: string;
  env: Record<string, unknown>;
  timeBudgetMs: number;
  /** Epoch ms from the signed request: no new step starts after it (see `Header.Deadline`). */
  deadline: number;
  failureFunction: ServeOptions['failureFunction'];
  /** The drive's `traceparent`, parsed (undefined when the runner exports no traces). */
  trace: TraceContext | undefined;
}

/** Committed steps that were too large to inline are fetched from the runner, authenticated. */
async function fetchSteps(runnerUrl: string, runId: string, token: string): Promise<StepRecord[]> {
  const url = `${runnerUrl}/v1/runs/${encodeURIComponent(runId)}/steps`;
  let response: RunnerAnswer;
  try {
    response = await runnerFetch(url, { method: 'GET', headers: { authorization: `Bearer ${token}` } });
  } catch (error) {
    throw new WorkflowError(
      'RUNNER',
      `Could not reach the wfkit runner at ${url} to fetch the steps of ${runId}: ${(error as Error).message}`,
      { cause: error },
    );
  }
  if (!response.ok)
    throw new WorkflowError('RUNNER', `Fetching the steps of ${runId} from ${url} failed with ${response.status}.`);
  const answer = parseJson(await response.text(), `the steps from ${url}`, Number.POSITIVE_INFINITY) as {
    steps: unknown;
  };
  return parseStepRecords(answer.steps, `the steps from ${url}`);
}

/**
 * A signed drive request (signature already verified): replay, continue, and stream one NDJSON
 * line per step, ending with the terminal line.
 */
export async function driveRun(input: DriveInput): Promise<Response> {
  // No depth scan of the drive body: its signature was verified (handler.ts), so the runner built
  // it, and its own nesting is fixed by the protocol (outputs travel as strings). The scan is linear
  // in the body, which carries every committed step's output, so it would grow with the run. The
  // payload inside is still depth-checked below.
  const drive = parseDriveRequest(parseJson(input.body, 'the drive request', Number.POSITIVE_INFINITY));
  if (drive.failure) return runFailureFunction(input, drive.runId, drive.body, drive.headers, drive.failure);
  const committed = drive.steps ?? (await fetchSteps(input.runnerUrl, drive.runId, input.token));
  const payload = drive.body.trim() === '' ? undefined : parseJson(drive.body, 'the run payload');
  const encoder = new TextEncoder();

  let open = true;
  let session: DriveSession | undefined;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      session = new DriveSession({
        committed,
        timeBudgetMs: input.timeBudgetMs,
        deadline: input.deadline,
        trace: input.trace,
        emit: (outcome) => {
          if (open) controller.enqueue(encoder.encode(encodeOutcome(outcome)));
        },
        close: () => {
          if (open) controller.close();
          open = false;
        },
      });
      const running = session;
      const context = createContext(
        {
          workflowRunId: drive.runId,
          requestPayload: payload,
          headers: drive.headers,
          env: input.env,
          url: input.workflowUrl,
          trace: input.trace,
        },
        running,
      );
      // Deferred a tick so the response (and its headers) leave before the first step runs.
      queueMicrotask(() => {
        Promise.resolve()
          .then(() => input.workflow(context))
          .then(
            (value) => running.finish(value),
            (error: unknown) => running.fail(error),
          );
      });
    },
    // The runner hung up (timeout, crash): enqueueing now would throw, and nothing that runs from here
    // on can be committed, so stop the workflow; steps in flight finish, no new step starts.
    cancel() {
      open = false;
      session?.fail(new WorkflowError('RUNNER', `The runner closed the drive response of ${drive.runId}.`));
    },
  });
  const headers: Record<string, string> = { 'content-type': NDJSON, 'cache-control': 'no-store' };
  if (input.failureFunction) headers[Header.FailureFunction] = '1';
  return new Response(stream, { status: 200, headers });
}

function toError(serialized: SerializedError): Error {
  const error = new Error(serialized.message);
  error.name = serialized.name;
  if (serialized.stack) error.stack = serialized.stack;
  return error;
}

/** A failed run's one call to `failureFunction`: answers `done`, or `failed` if it threw. */
async function runFailureFunction(
  input: DriveInput,
  runId: string,
  body: string,
  headers: Record<string, string>,
  failure: NonNullable<DriveRequest['failure']>,
): Promise<Response> {
  let line: Outcome = { t: 'done' };
  if (input.failureFunction) {
    const requestPayload = body.trim() === '' ? undefined : parseJson(body, 'the run payload');
    const context = {
      workflowRunId: runId,
      requestPayload,
      headers,
      env: input.env,
      url: input.workflowUrl,
      trace: input.trace,
    };
    try {
      await input.failureFunction({ context, error: toError(failure.error), failedStep: failure.failedStep });
    } catch (error) {
      line = { t: 'failed', error: serializeError(error), retryable: false };
    }
  }
  return new Response(encodeOutcome(line), {
    status: 200,
    headers: { 'content-type': NDJSON, 'cache-control': 'no-store' },
  });
}
