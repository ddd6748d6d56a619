import { serializeError, type SerializedError } from '../../protocol/errors.js';
import {
  childEventId,
  childRunIdOf,
  childStartRequest,
  INVOKE_POLL_MS,
  invokeAsCallRequest,
  invokeResult,
} from '../drive/invoke.js';
import { FINISHED_RUN_STATUSES, type Run, type Step } from '../store/types.js';
import { failed, succeeded } from './resolved.js';
import type { ResolveContext, Resolution, RunnerStepKind } from './types.js';

/**
 * The child run of an invoke step: started (idempotently: a repeat finds the same run) the first
 * time, its id then recorded on the step; read back on later resolutions. A start the runner
 * refuses (an origin it does not allow) fails the step, which the workflow can catch.
 */
async function startedChild(
  ctx: ResolveContext,
  run: Run,
  step: Step,
): Promise<{ ok: true; run: Run } | { ok: false; error: SerializedError }> {
  const known = childRunIdOf(step);
  if (known !== undefined) {
    const child = await ctx.store.getRun(known);
    if (child) return { ok: true, run: child };
  }
  let child: Run;
  try {
    child = (await ctx.startRun(childStartRequest(run.id, step.index, ctx.credentials.open(step.request!)))).run;
  } catch (error) {
    return { ok: false, error: serializeError(error) };
  }
  if (known === undefined) {
    await ctx.commit([
      {
        type: 'step-suspended',
        runId: run.id,
        index: step.index,
        name: step.name,
        kind: step.kind,
        group: step.group,
        until: null,
        eventId: childEventId(child.id),
        request: null,
        at: ctx.now(),
      },
    ]);
  }
  return { ok: true, run: child };
}

/**
 * A child run (see ../invoke.ts): started once, resolved with its end. The child's end wakes the
 * parent; the poll only covers a runner that died before that wake.
 */
export const invokeKind: RunnerStepKind<'invoke'> = {
  stored: (s) => ({ until: null, eventId: null, request: invokeAsCallRequest(s.request) }),
  described: (step) => step.request !== null,
  resolve: async (ctx, run, steps) => {
    const now = ctx.now();
    const out: Resolution[] = [];
    for (const step of steps) {
      const child = await startedChild(ctx, run, step);
      if (!child.ok) out.push(failed(step, child.error, now));
      else if (FINISHED_RUN_STATUSES.has(child.run.status)) out.push(succeeded(step, invokeResult(child.run), now));
      else out.push({ t: 'pending', wakeAt: now + INVOKE_POLL_MS, status: 'waiting' });
    }
    return out;
  },
  /** A child that ended between the resolution and the parking: its wake came first and was undone. */
  endedMeanwhile: async (store, step) => {
    const childId = childRunIdOf(step);
    if (childId === undefined) return false;
    const child = await store.getRun(childId);
    return child !== undefined && FINISHED_RUN_STATUSES.has(child.status);
  },
  dto: (step) => {
    const childRunId = childRunIdOf(step);
    return childRunId === undefined ? {} : { childRunId };
  },
};
