/**
 * Parent and child runs of `context.invoke`, read from fields every run and step already has (no
 * schema of their own): a child's idempotency key is `invoke:<parentRunId>:<stepIndex>`, and the
 * parent's invoke step keeps the child's id in `eventId` as `wf-child:<childRunId>`. Edge-safe:
 * the runner, the API, the dashboards and `wf logs` read the links the same way.
 */

const KEY_PREFIX = 'invoke:';
const CHILD_PREFIX = 'wf-child:';

export function childIdempotencyKey(parentRunId: string, index: number): string {
  return `${KEY_PREFIX}${parentRunId}:${index}`;
}

/** The parent of a child run, from its idempotency key; undefined for a run nobody invoked. */
export function parentOf(run: {
  idempotencyKey: string | null;
}): { parentRunId: string; parentStepIndex: number } | undefined {
  const key = run.idempotencyKey;
  if (key === null || !key.startsWith(KEY_PREFIX)) return undefined;
  const colon = key.lastIndexOf(':');
  const index = Number(key.slice(colon + 1));
  if (colon <= KEY_PREFIX.length || colon === key.length - 1 || !Number.isInteger(index)) return undefined;
  return { parentRunId: key.slice(KEY_PREFIX.length, colon), parentStepIndex: index };
}

export function childEventId(childRunId: string): string {
  return CHILD_PREFIX + childRunId;
}

/** The child run an invoke step started; undefined for another kind, or before it was started. */
export function childRunIdOf(step: { kind: string; eventId: string | null }): string | undefined {
  return step.kind === 'invoke' && step.eventId?.startsWith(CHILD_PREFIX)
    ? step.eventId.slice(CHILD_PREFIX.length)
    : undefined;
}
