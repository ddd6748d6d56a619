import type { Run, RunPatch } from '../store/types.js';
import { DEFAULT_UNREACHABLE_POLICY, unreachableDelay, type UnreachablePolicy } from '../drive/unreachable.js';
import type { AlertDelivery } from './deliver.js';

/**
 * What one delivery of a failed run's alert means for the alert (pure, like `settle`). The status
 * stays `failed`; only the alert's own fields change: its state, its attempts and its schedule
 * (`alertNextAt`). The failureFunction call is another delivery with its own (run-end/owed.ts):
 * neither waits for the other, so `failures`, `unreachableSince` and `nextAt` are not the alert's.
 *
 * - delivered (2xx): done.
 * - anything else (no answer, a refusal, a redirect): tried again on the unreachable schedule
 *   counted from when the run failed (1 s, then about as long as it has been failing, at most
 *   `capMs` apart; a `Retry-After` honoured within the cap) until `horizonMs`, then given up.
 */
export function settleAlert(
  run: Run,
  delivery: Pick<AlertDelivery, 'delivered' | 'retryAfterMs'>,
  now: number,
  random: () => number = Math.random,
  policy: UnreachablePolicy = DEFAULT_UNREACHABLE_POLICY,
): RunPatch {
  const base: RunPatch = { attempts: run.attempts + 1, alertAttempts: (run.alertAttempts ?? 0) + 1 };
  if (delivery.delivered) return { ...base, alert: 'delivered', alertNextAt: null };
  const since = run.finishedAt ?? now;
  if (now - since >= policy.horizonMs) return { ...base, alert: 'failed', alertNextAt: null };
  return { ...base, alertNextAt: now + unreachableDelay(since, now, policy, delivery.retryAfterMs, random) };
}
