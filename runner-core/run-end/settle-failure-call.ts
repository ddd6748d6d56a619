import type { DriveRequest } from '../../protocol/messages.js';
import type { AttemptResult } from '../drive/attempt.js';
import { MAX_DELAY_MS, nextDelay } from '../drive/retry.js';
import type { Run, RunPatch, Step } from '../store/types.js';
import { DEFAULT_UNREACHABLE_POLICY, type SettleClock, unreachableDelay } from '../drive/unreachable.js';

/**
 * What one delivery of a failed run's failureFunction call means for the run. Pure, like `settle`.
 * The run's status stays `failed` throughout; only the call's own fields change: its state, its
 * attempts, `failures` and `unreachableSince` (the run drives no more, so they are the call's), and
 * its schedule (`failureCallNextAt`). The alert is another delivery (run-end/owed.ts): neither
 * waits for the other, and the run's `nextAt` is composed from both by run-end/deliveries.ts.
 *
 * - `done`: delivered. The app unreachable: tried again on the unreachable schedule (the same one
 *   drives use, spending none of the call's retries) until the outage outlasts the horizon.
 * - the failureFunction threw (`failed`) or the route answered with an error: retried with the run's
 *   retry policy (`failures` counts them), then given up (`failed`), as at once when no retry can fix it.
 */
export function settleFailureCall(run: Run, result: AttemptResult, at: SettleClock): RunPatch {
  const { now, random = Math.random, unreachable = DEFAULT_UNREACHABLE_POLICY } = at;
  const end = result.end;
  const base: RunPatch = { attempts: run.attempts + 1, failureCallAttempts: run.failureCallAttempts + 1 };
  const answered: RunPatch = run.unreachableSince !== null ? { ...base, unreachableSince: null } : base;
  if (end.t === 'done') return { ...answered, failureCall: 'delivered', failures: 0, failureCallNextAt: null };
  if (end.t === 'error' && end.unreachable) {
    const since = run.unreachableSince ?? now;
    if (now - since >= unreachable.horizonMs) {
      // The run's own error stays what failed the run; the attempt log shows the call's last error.
      return { ...base, failureCall: 'failed', failureCallNextAt: null };
    }
    return {
      ...base,
      unreachableSince: since,
      failureCallNextAt: now + unreachableDelay(since, now, unreachable, end.retryAfterMs, random),
    };
  }
  // Any other terminal line (continue, suspend, cancel) is not an answer a failure call can give.
  const retryable = (end.t === 'error' || end.t === 'failed') && end.retryable;
  const failures = run.failures + 1;
  if (!retryable || failures > run.retries)
    return { ...answered, failureCall: 'failed', failures, failureCallNextAt: null };
  const retryAfterMs = end.t === 'error' || end.t === 'failed' ? end.retryAfterMs : undefined;
  const delay = Math.min(
    retryAfterMs ?? nextDelay(failures, { retries: run.retries, baseMs: run.retryDelayMs }, random),
    MAX_DELAY_MS,
  );
  return { ...answered, failures, failureCallNextAt: now + delay };
}

/** What the route's failureFunction is told: the run's error and the step that failed for good, if one did. */
export function failureRequest(run: Run, steps: readonly Step[]): NonNullable<DriveRequest['failure']> {
  const failure: NonNullable<DriveRequest['failure']> = {
    error: run.error ?? { name: 'Error', message: 'The run failed.' },
  };
  const failedStep = steps.findLast((s) => s.status === 'failed');
  if (failedStep) failure.failedStep = { index: failedStep.index, name: failedStep.name, kind: failedStep.kind };
  return failure;
}
