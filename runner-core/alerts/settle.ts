import type { Run, RunPatch } from '../store/types.js';
import { DEFAULT_UNREACHABLE_POLICY, unreachableDelay, type UnreachablePolicy } from '../unreachable.js';
import type { AlertDelivery } from './deliver.js';

/**
 * A run that just failed owes an alert (merged into its failing patch when the runner has a
 * webhook): pending and due now. A run failing again after a resume owes a new one.
 */
export function owedAlert(now: number): RunPatch {
  return { alert: 'pending', alertAttempts: 0, nextAt: now };
}

/**
 * Whether the native driver delivers this failed run's failureFunction call after its alert. An
 * Upstash-protocol run's failure callback is a QStash message the engine delivers itself
 * (runner-core/qstash/delivery.ts): the scheduler must not claim that run again once it alerted.
 */
export function owesNativeFailureCall(run: Pick<Run, 'failureCall' | 'protocol'>): boolean {
  return run.failureCall === 'pending' && run.protocol !== 'upstash';
}

/**
 * What one delivery of a failed run's alert means for the run (pure, like `settle`). The status
 * stays `failed`; `failures` and `unreachableSince` stay the run's (its failureFunction call's).
 *
 * - delivered (2xx): done; the failureFunction call, when one is pending, is due now (it waits for
 *   the alert, so an app that is down, the usual reason to alert, does not hold the alert back).
 * - anything else (no answer, a refusal, a redirect): tried again on the unreachable schedule
 *   counted from when the run failed (1 s, then about as long as it has been failing, at most
 *   `capMs` apart; a `Retry-After` honoured within the cap) until `horizonMs`, then given up.
 */
export function settleAlert(run: Run, delivery: Pick<AlertDelivery, 'delivered' | 'retryAfterMs'>, now: number, random: () => number = Math.random, policy: UnreachablePolicy = DEFAULT_UNREACHABLE_POLICY): RunPatch {
  const base: RunPatch = { attempts: run.attempts + 1, alertAttempts: (run.alertAttempts ?? 0) + 1 };
  const next = owesNativeFailureCall(run) ? now : null;
  if (delivery.delivered) return { ...base, alert: 'delivered', nextAt: next };
  const since = run.finishedAt ?? now;
  if (now - since >= policy.horizonMs) return { ...base, alert: 'failed', nextAt: next };
  return { ...base, nextAt: now + unreachableDelay(since, now, policy, delivery.retryAfterMs, random) };
}
