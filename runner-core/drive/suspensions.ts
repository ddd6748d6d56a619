import type { Change, Run, RunPatch, Step } from '../store/types.js';
import { runnerKind, runnerKinds, type Resolution, type ResolveContext } from '../step-kinds/index.js';
export type { ResolveContext } from '../step-kinds/index.js';
export { CALL_SLOT_RECHECK_MS } from '../step-kinds/call.js';

/** The steps of a run that the runner owes it: sleeps, waits, calls and invokes not yet finished. */
export function pendingSteps(steps: readonly Step[]): Step[] {
  return steps.filter((s) => runnerKind(s.kind) !== undefined && s.status === 'running');
}

/**
 * Resolves what it can of a run's pending steps, each kind by its module (step-kinds/): makes the
 * HTTP calls, starts or reads child runs, wakes due sleeps, times out due waits, hands kept events
 * to their waits. Returns `undefined` when something was resolved (drive the run now, even if other
 * steps still pend: a `Promise.race` may go on), else the patch that parks the run until the
 * earliest wake-up (a `notify` wakes it sooner).
 */
export async function resolvePending(
  ctx: ResolveContext,
  run: Run,
  signal: AbortSignal,
): Promise<{ patch: RunPatch; pending: number } | undefined> {
  const pending = pendingSteps(await ctx.store.listSteps(run.id));
  // A step the route registered but never described (its response ended with a failure before the
  // `suspend` line): only a drive can describe it.
  if (pending.length === 0 || pending.some((s) => !runnerKind(s.kind)!.described(s))) return undefined;
  // An aborted drive (its lease lost, the runner stopping) resolves nothing: no call, no kept event taken.
  if (signal.aborted) return undefined;
  const resolutions: Resolution[] = [];
  for (const kind of runnerKinds()) {
    const steps = pending.filter((s) => s.kind === kind);
    if (steps.length === 0) continue;
    const resolved = await runnerKind(kind)!.resolve(ctx, run, steps, signal);
    if (resolved === 'aborted') return undefined;
    resolutions.push(...resolved);
  }
  const changes: Change[] = resolutions.flatMap((r) => (r.t === 'resolved' ? [r.change] : []));
  if (changes.length > 0) {
    if (run.status === 'sleeping' || run.status === 'waiting')
      changes.push({ type: 'run', runId: run.id, patch: { status: 'running' }, at: ctx.now() });
    await ctx.commit(changes);
    return undefined;
  }
  const waits = resolutions.flatMap((r) => (r.t === 'pending' ? [r] : []));
  const wakeAt = Math.min(...waits.map((w) => w.wakeAt ?? Number.POSITIVE_INFINITY));
  const status = waits.some((w) => w.status === 'waiting') ? 'waiting' : 'sleeping';
  return { patch: { status, nextAt: Number.isFinite(wakeAt) ? wakeAt : null }, pending: pending.length };
}
