import { childEventId } from '../../api/links.js';
import { ApiError } from '../errors.js';
import { describeError } from '../telemetry/logger.js';
import type { Change } from '../store/types.js';
import { openHeaders, sealHeaders, type EngineContext, type Invoker, type RunConfig } from './context.js';
import { parseMessage } from './messages/spec.js';
import { parseJsonObject, toSdkStep } from './sdk-steps.js';
import { WorkflowHeader } from './headers.js';

export type { Invoker } from './context.js';

/**
 * `context.invoke`: the invoking workflow publishes the child's first message itself
 * (`Upstash-Workflow-Invoke: true`) with a body that wraps the child's payload and names the
 * invoker: `{body, headers, workflowRunId, workflowUrl, step}`. QStash unwraps it (the child sees
 * only its payload) and, when the child ends, sends the invoker its step's result
 * `{body, isFailed, isCanceled}` with the invoker's headers. This file is that part of QStash.
 */

/** The child's payload and its invoker, from the first message's body; undefined when the body is not an invoke request. */
export function readInvokeRequest(
  context: EngineContext,
  body: string,
): { payload: string; invoker: Invoker } | undefined {
  const request = parseJsonObject(body) as
    | { body?: unknown; headers?: unknown; workflowRunId?: unknown; workflowUrl?: unknown; step?: unknown }
    | undefined;
  if (request === undefined) return undefined;
  const step = toSdkStep(request.step);
  if (typeof request.workflowRunId !== 'string' || typeof request.workflowUrl !== 'string' || !step) return undefined;
  // The SDK sends header lists (`{name: [value]}`); a message has one value a name.
  const headers: Record<string, string> = {};
  if (typeof request.headers === 'object' && request.headers !== null) {
    for (const [name, values] of Object.entries(request.headers as Record<string, unknown>)) {
      const first = Array.isArray(values) ? values[0] : values;
      if (typeof first === 'string') headers[name.toLowerCase()] = first;
    }
  }
  const sealed = sealHeaders(context.credentials, 'POST', request.workflowUrl, headers);
  return {
    payload:
      typeof request.body === 'string' ? request.body : request.body === undefined ? '' : JSON.stringify(request.body),
    invoker: { runId: request.workflowRunId, url: request.workflowUrl, ...sealed, step },
  };
}

/**
 * The invoker's step row, running until the child answers; it names the child as native invoke
 * steps do (`wf-child:<id>` in `eventId`, api/links.ts), so the dashboards link the two runs.
 */
export function invokeStepChanges(invoker: Invoker, childRunId: string, now: number): Change[] {
  const { step } = invoker;
  if (step.stepId <= 0) return [];
  return [
    {
      type: 'step-suspended',
      runId: invoker.runId,
      index: step.stepId,
      name: step.stepName,
      kind: 'invoke',
      group: null,
      until: null,
      eventId: childEventId(childRunId),
      request: null,
      at: now,
    },
  ];
}

/**
 * The child ended: its invoker gets the result as the invoke step's result (a run message of its
 * own, so the invoker goes on). A refused publish (the invoker ended meanwhile) is logged, not thrown.
 */
export async function answerInvoker(
  context: EngineContext,
  config: RunConfig,
  result: { body: string | undefined; isFailed: boolean; isCanceled: boolean },
): Promise<void> {
  const invoker = config.invoker;
  if (!invoker) return;
  try {
    const headers = openHeaders(context.credentials, 'POST', invoker.url, invoker.headers, invoker.sealed);
    const step = { ...invoker.step, out: JSON.stringify(result) };
    await context.publish([
      parseMessage(invoker.url, { ...headers, [WorkflowHeader.Init]: 'false' }, JSON.stringify(step)),
    ]);
  } catch (error) {
    // The invoker ended first (cancelled with its children, say): nobody waits for the result.
    if (error instanceof ApiError && error.code === 'WORKFLOW_RUN_FINISHED') return;
    context.logger.error(
      `the result of an invoked workflow was not sent to run ${invoker.runId}: ${describeError(error)}`,
      { runId: invoker.runId },
    );
  }
}
