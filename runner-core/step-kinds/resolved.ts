import type { SerializedError } from '../../protocol/errors.js';
import { encodeValue } from '../../protocol/values.js';
import type { Change, Step } from '../store/types.js';
import type { Resolution } from './types.js';

/** A step the runner resolved with `value`. */
export function succeeded(step: Step, value: unknown, at: number): Resolution {
  const output = encodeValue(value, `${step.kind} "${step.name}"`) ?? null;
  const change: Change = {
    type: 'step-succeeded',
    runId: step.runId,
    index: step.index,
    name: step.name,
    kind: step.kind,
    output,
    at,
    durationMs: Math.max(0, at - step.startedAt),
  };
  return { t: 'resolved', change };
}

/** A step that failed for good (the workflow sees the error, and may catch it). */
export function failed(step: Step, error: SerializedError, at: number): Resolution {
  const change: Change = {
    type: 'step-failed',
    runId: step.runId,
    index: step.index,
    name: step.name,
    kind: step.kind,
    error,
    status: 'failed',
    at,
    durationMs: at - step.startedAt,
  };
  return { t: 'resolved', change };
}

/** Hooks most kinds share: nothing to re-check after parking, nothing to add to the API's record. */
export const noneMeanwhile = async (): Promise<boolean> => false;
export const noDto = (): Record<string, never> => ({});
