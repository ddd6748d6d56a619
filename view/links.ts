import { childRunIdOf, parentOf } from '../api/links.js';

/**
 * Parent and child runs (`context.invoke`) as every view shows them: the API's fields, or (for a
 * record read some other way) the same links read from the key and the step's event id.
 */

export function runParent(run: {
  idempotencyKey: string | null;
  parentRunId?: string;
  parentStepIndex?: number;
}): { parentRunId: string; parentStepIndex: number } | undefined {
  if (run.parentRunId !== undefined) return { parentRunId: run.parentRunId, parentStepIndex: run.parentStepIndex ?? 0 };
  return parentOf(run);
}

export function stepChild(step: { kind: string; eventId: string | null; childRunId?: string }): string | undefined {
  return step.childRunId ?? childRunIdOf(step);
}
