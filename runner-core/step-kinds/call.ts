import { Header } from '../../protocol/headers.js';
import { serializeError } from '../../protocol/errors.js';
import { performCall, type CallResult } from '../drive/call.js';
import { isFull } from '../egress/slots.js';
import type { Step } from '../store/types.js';
import { failed, noDto, noneMeanwhile, succeeded } from './resolved.js';
import type { ResolveContext, RunnerStepKind } from './types.js';

/** A call whose target's origin had no free slot: made on a later resolution. */
const DEFERRED = 'deferred' as const;
/** How soon a run whose calls were deferred for want of a slot looks again. */
export const CALL_SLOT_RECHECK_MS = 250;

/**
 * Makes a call with its credentials unsealed, in a slot at its target's origin (`DEFERRED` when
 * this runner has its share in flight there). One that cannot be unsealed, or whose URL is no
 * URL, fails like a call that failed.
 */
async function call(
  ctx: ResolveContext,
  step: Step,
  signal: AbortSignal,
): Promise<Awaited<ReturnType<typeof performCall>> | typeof DEFERRED> {
  let slot: ReturnType<ResolveContext['egress']['acquire']> | undefined;
  try {
    const request = ctx.credentials.open(step.request!);
    slot = ctx.egress.acquire(new URL(request.url), 'call', step.runId);
    if (isFull(slot)) {
      if (slot.newlyWaiting) ctx.onWaitingForSlot?.([step.runId]);
      return DEFERRED;
    }
    const traced =
      ctx.tracing && !Object.keys(request.headers).some((name) => name.toLowerCase() === Header.Traceparent);
    return await performCall(
      ctx.egress,
      slot,
      traced
        ? {
            ...request,
            headers: { ...request.headers, [Header.Traceparent]: ctx.tracing!.callTraceparent(step.runId, step.index) },
          }
        : request,
      signal,
    );
  } catch (error) {
    return { ok: false, error: serializeError(error) };
  } finally {
    if (slot && !isFull(slot)) slot.release();
  }
}

/**
 * An HTTP call the runner makes (all of a run's at once), its answer the step's value with the
 * answer's credentials redacted. A deferred call is tried again soon, the run sleeping meanwhile;
 * an answer that comes after the drive was aborted is not recorded (the call is made again).
 */
export const callKind: RunnerStepKind<'call'> = {
  stored: (s) => ({ until: null, eventId: null, request: s.request }),
  described: (step) => step.request !== null,
  resolve: async (ctx, _run, steps, signal) => {
    const results = await Promise.all(steps.map((s) => call(ctx, s, signal)));
    if (signal.aborted) return 'aborted';
    const now = ctx.now();
    return steps.map((step, i) => {
      const outcome = results[i]!;
      if (outcome === DEFERRED) return { t: 'pending', wakeAt: now + CALL_SLOT_RECHECK_MS, status: 'sleeping' };
      if (!outcome.ok) return failed(step, outcome.error, now);
      return succeeded(
        step,
        { ...outcome.result, headers: ctx.credentials.redact(outcome.result.headers) } satisfies CallResult,
        now,
      );
    });
  },
  endedMeanwhile: noneMeanwhile,
  dto: noDto,
};
