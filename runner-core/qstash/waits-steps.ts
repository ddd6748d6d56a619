import { encodeValue } from '../../protocol/values.js';
import type { Change } from '../store/types.js';
import { resultStepId, type Wait } from './waits.js';

/**
 * The rows of the run's `steps` a wait writes, so the dashboards, `wf logs` and `GET /v1/runs/:id`
 * show it: the SDK never publishes a wait step (it calls `/v2/wait`), so nobody else would.
 * `eventId` stays null: a native wait's column, which the native notify would act on.
 */

const group = (wait: Wait): number | null => (wait.step.concurrent > 1 ? resultStepId(wait.step) : null);

/** The wait registered: the step waits until its deadline. */
export function waitStartedChanges(wait: Wait, at: number): Change[] {
  return [{ type: 'step-suspended', runId: wait.runId, index: resultStepId(wait.step), name: wait.step.stepName, kind: 'wait', group: group(wait), until: wait.deadline, eventId: null, request: null, at }];
}

/** The event's body as the SDK gives it to the workflow: JSON when it parses, else the text. */
function eventValue(data: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return data;
  }
}

/** The wait ended: its output is what `context.waitForEvent` returns, `{ eventData, timeout }`. */
export function waitEndedChanges(wait: Wait, ended: { data: string } | { timedOut: true }, at: number): Change[] {
  const value = 'data' in ended ? { eventData: eventValue(ended.data), timeout: false } : { eventData: undefined, timeout: true };
  const output = encodeValue(value, `wait "${wait.step.stepName}"`) ?? null;
  return [{ type: 'step-succeeded', runId: wait.runId, index: resultStepId(wait.step), name: wait.step.stepName, kind: 'wait', output, at, durationMs: Math.max(0, at - wait.createdAt) }];
}
