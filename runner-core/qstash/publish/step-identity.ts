import type { PublishedStep } from '../delivery/in-progress.js';
import { forwardedHeader, WorkflowHeader } from '../headers.js';
import type { MessageSpec } from '../messages/spec.js';
import { readSdkStep } from '../sdk-steps.js';

/**
 * Which step of its run a published message is, as the SDK numbers steps: what settles the
 * delivery it was published during (../delivery/in-progress.ts) and what makes it the step's only
 * message (its deduplication key).
 */

/** The step of its run a call (`context.call`, call type `toCallback`) is made for: its callback names it. */
function callStep(spec: MessageSpec): PublishedStep | undefined {
  const headers = spec.callback?.headers ?? {};
  const stepId = Number(headers[forwardedHeader(WorkflowHeader.StepId)]);
  if (!Number.isInteger(stepId) || stepId <= 0) return undefined;
  const concurrent = Number(headers[forwardedHeader(WorkflowHeader.Concurrent)] ?? '1');
  return { stepId, concurrent: Number.isInteger(concurrent) && concurrent > 0 ? concurrent : 1 };
}

/** The step of its run a run message carries (a result, a plan step, a call), as the SDK numbers it. */
export function publishedStep(spec: MessageSpec): PublishedStep | undefined {
  if (spec.workflow?.callType === 'toCallback') return callStep(spec);
  if (spec.workflow?.callType !== 'step') return undefined;
  const step = readSdkStep(spec.body);
  return step && { stepId: step.stepId, concurrent: step.concurrent ?? 1 };
}

/**
 * A run message's own deduplication: one message per step of a run (the SDK's identity of a step:
 * its id, and a plan step's target), one call per call step. A second one (its delivery sent again,
 * the SDK's publish retried) answers the first message's id and writes nothing: the SDK replays the
 * first result, so no second one may be stored, nor shown.
 */
export function stepKey(spec: MessageSpec): string | null {
  const runId = spec.workflow?.runId;
  if (runId === undefined) return null;
  if (spec.workflow?.callType === 'toCallback') {
    const step = callStep(spec);
    return step ? `call:${runId}:${step.stepId}` : null;
  }
  if (spec.workflow?.callType !== 'step') return null;
  const step = readSdkStep(spec.body);
  if (!step) return null;
  return `step:${runId}:${step.stepId}:${step.stepId === 0 ? (step.targetStep ?? 0) : 0}`;
}
