import { encodeValue } from '../protocol/values.js';
import { serializeError } from '../protocol/errors.js';
import { performCall, type CallResult } from './call.js';
import type { CallCredentials } from './call-credentials.js';
import type { EgressGate } from './egress/gate.js';
import { isFull } from './egress/slots.js';
import { childEventId, childRunIdOf, childStartRequest, INVOKE_POLL_MS, invokeResult } from './invoke.js';
import type { StartRequest } from '../protocol/messages.js';
import { Header } from '../protocol/headers.js';
import type { Tracing } from './tracing.js';
import { FINISHED_RUN_STATUSES, type Change, type Run, type RunPatch, type Step, type Store } from './store/types.js';

export interface ResolveContext {
  store: Store;
  /** Every call goes out through the gate, in a slot at its target's origin. */
  egress: EgressGate;
  now: () => number;
  commit: (changes: Change[]) => Promise<void>;
  /** Opens the calls' sealed credentials, and redacts the answers' before they are stored. */
  credentials: CallCredentials;
  /** Starts a child run through the normal start path (allowed origins, idempotency key). */
  startRun: (request: StartRequest) => Promise<{ run: Run }>;
  /** A run whose call was deferred for want of a slot at its target's origin (told once per wait). */
  onWaitingForSlot?: ((runIds: string[]) => void) | undefined;
  /** When traces are exported: a call carries its step span's `traceparent` (unless the app set one). */
  tracing?: Tracing | undefined;
}

function isDescribed(step: Step): boolean {
  return step.kind === 'call' || step.kind === 'invoke' ? step.request !== null : step.until !== null;
}

/** The steps of a run that the runner owes it: sleeps, waits and calls not yet finished. */
export function pendingSteps(steps: readonly Step[]): Step[] {
  return steps.filter((s) => s.kind !== 'run' && s.status === 'running');
}

function succeeded(step: Step, value: unknown, at: number): Change {
  const output = encodeValue(value, `${step.kind} "${step.name}"`) ?? null;
  return { type: 'step-succeeded', runId: step.runId, index: step.index, name: step.name, kind: step.kind, output, at, durationMs: Math.max(0, at - step.startedAt) };
}

/** A call whose target's origin had no free slot: made on a later resolution. */
const DEFERRED = 'deferred' as const;
/** How soon a run whose calls were deferred for want of a slot looks again. */
export const CALL_SLOT_RECHECK_MS = 250;

/**
 * Makes a call with its credentials unsealed, in a slot at its target's origin (`DEFERRED` when
 * this runner has its share in flight there). One that cannot be unsealed, or whose URL is no
 * URL, fails like a call that failed.
 */
async function call(ctx: ResolveContext, step: Step, signal: AbortSignal): Promise<Awaited<ReturnType<typeof performCall>> | typeof DEFERRED> {
  let slot;
  try {
    const request = ctx.credentials.open(step.request!);
    slot = ctx.egress.acquire(new URL(request.url), 'call', step.runId);
    if (isFull(slot)) {
      if (slot.newlyWaiting) ctx.onWaitingForSlot?.([step.runId]);
      return DEFERRED;
    }
    const traced = ctx.tracing && !Object.keys(request.headers).some((name) => name.toLowerCase() === Header.Traceparent);
    return await performCall(ctx.egress, slot, traced ? { ...request, headers: { ...request.headers, [Header.Traceparent]: ctx.tracing!.callTraceparent(step.runId, step.index) } } : request, signal);
  } catch (error) {
    return { ok: false, error: serializeError(error) };
  } finally {
    if (slot && !isFull(slot)) slot.release();
  }
}

/**
 * Resolves what it can of a run's pending steps: makes the HTTP calls, wakes due sleeps, times out
 * due waits, hands kept events to their waits. Returns `undefined` when something was resolved (drive
 * the run now, even if other steps still pend: a `Promise.race` may go on), else the patch that parks
 * the run until the earliest wake-up (a `notify` wakes it sooner).
 */
export async function resolvePending(ctx: ResolveContext, run: Run, signal: AbortSignal): Promise<{ patch: RunPatch; pending: number } | undefined> {
  const pending = pendingSteps(await ctx.store.listSteps(run.id));
  // A step the route registered but never described (its response ended with a failure before the
  // `suspend` line): only a drive can describe it.
  if (pending.length === 0 || pending.some((s) => !isDescribed(s))) return undefined;
  const changes: Change[] = [];
  const calls = pending.filter((s) => s.kind === 'call' && s.request);
  const results = await Promise.all(calls.map((s) => call(ctx, s, signal)));
  if (signal.aborted) return undefined;
  const now = ctx.now();
  let deferred = false;
  calls.forEach((step, i) => {
    const outcome = results[i]!;
    if (outcome === DEFERRED) deferred = true;
    else if (outcome.ok) changes.push(succeeded(step, { ...outcome.result, headers: ctx.credentials.redact(outcome.result.headers) } satisfies CallResult, now));
    else changes.push({ type: 'step-failed', runId: run.id, index: step.index, name: step.name, kind: step.kind, error: outcome.error, status: 'failed', at: now, durationMs: now - step.startedAt });
  });
  const waiting: Step[] = [];
  let invoking = false;
  for (const step of pending.filter((s) => s.kind === 'invoke')) {
    const child = await startedChild(ctx, run, step);
    if (!child.ok) changes.push({ type: 'step-failed', runId: run.id, index: step.index, name: step.name, kind: step.kind, error: child.error, status: 'failed', at: now, durationMs: now - step.startedAt });
    else if (FINISHED_RUN_STATUSES.has(child.run.status)) changes.push(succeeded(step, invokeResult(child.run), now));
    else invoking = true;
  }
  for (const step of pending) {
    if (step.kind === 'sleep' && step.until !== null && step.until <= now) changes.push(succeeded(step, undefined, now));
    else if (step.kind === 'wait' && step.until !== null && step.until <= now) changes.push(succeeded(step, { eventData: undefined, timeout: true }, now));
    else if (step.kind === 'wait' && step.eventId !== null) {
      const kept = await ctx.store.takeEvent(step.eventId, now);
      if (kept !== undefined) changes.push(succeeded(step, { eventData: (JSON.parse(kept) as { data?: unknown }).data, timeout: false }, now));
      else waiting.push(step);
    } else if (step.kind !== 'call' && step.kind !== 'invoke') waiting.push(step);
  }
  if (changes.length > 0) {
    if (run.status === 'sleeping' || run.status === 'waiting') changes.push({ type: 'run', runId: run.id, patch: { status: 'running' }, at: now });
    await ctx.commit(changes);
    return undefined;
  }
  // A child's end wakes its parent; the poll only covers a runner that died before that wake. A
  // deferred call is tried again soon, without holding a drive slot meanwhile.
  const wakeAt = Math.min(
    ...waiting.map((s) => s.until ?? Number.POSITIVE_INFINITY),
    invoking ? now + INVOKE_POLL_MS : Number.POSITIVE_INFINITY,
    deferred ? now + CALL_SLOT_RECHECK_MS : Number.POSITIVE_INFINITY,
  );
  const status = invoking || waiting.some((s) => s.kind === 'wait') ? 'waiting' : 'sleeping';
  return { patch: { status, nextAt: Number.isFinite(wakeAt) ? wakeAt : null }, pending: pending.length };
}

/**
 * The child run of an invoke step: started (idempotently: a repeat finds the same run) the first
 * time, its id then recorded on the step; read back on later resolutions. A start the runner
 * refuses (an origin it does not allow) fails the step, which the workflow can catch.
 */
async function startedChild(ctx: ResolveContext, run: Run, step: Step): Promise<{ ok: true; run: Run } | { ok: false; error: ReturnType<typeof serializeError> }> {
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
    await ctx.commit([{ type: 'step-suspended', runId: run.id, index: step.index, name: step.name, kind: step.kind, group: step.group, until: null, eventId: childEventId(child.id), request: null, at: ctx.now() }]);
  }
  return { ok: true, run: child };
}
