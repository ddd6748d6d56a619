import type { Run, RunPatch } from '../store/types.js';

/**
 * What a failed run owes, besides its status: its failureFunction call and its failure alert. They
 * are independent deliveries: each has its own state (`failureCall`, `alert`), attempts counter
 * and schedule (`failureCallNextAt`, `alertNextAt`), and neither waits for the other. The run's
 * `nextAt`, which claims read, is the earlier schedule of the ones the native scheduler delivers,
 * so the run stays claimable while either is owed.
 */

/** The fields `deliveriesDueAt` reads. */
export type OwedFields = Pick<
  Run,
  'failureCall' | 'alert' | 'protocol' | 'nextAt' | 'failureCallNextAt' | 'alertNextAt'
>;

/**
 * Whether the native driver delivers this failed run's failureFunction call. An Upstash-protocol
 * run's failure callback is a QStash message its engine delivers (qstash/delivery.ts), so the
 * native scheduler never claims that run for it.
 */
export function owesNativeFailureCall(run: Pick<Run, 'failureCall' | 'protocol'>): boolean {
  return run.failureCall === 'pending' && run.protocol !== 'upstash';
}

/** Whether the run's alert is still to be delivered (by the native driver, whatever the protocol). */
export function owesAlert(run: Pick<Run, 'alert'>): boolean {
  return run.alert === 'pending';
}

/** A run that just failed owes its failureFunction call: pending and due now, counting its own failures and outages from zero. */
export function owedFailureCall(at: number): RunPatch {
  return { failureCall: 'pending', failureCallAttempts: 0, failureCallNextAt: at, failures: 0, unreachableSince: null };
}

/** A run that just failed owes an alert (when the runner has a webhook): pending and due now. A run failing again after a resume owes a new one. */
export function owedAlert(at: number): RunPatch {
  return { alert: 'pending', alertAttempts: 0, alertNextAt: at };
}

/** When the failureFunction call is tried next (a run stored before the schedules existed: its `nextAt`). */
export function failureCallDueAt(run: OwedFields): number | null {
  return owesNativeFailureCall(run) ? (run.failureCallNextAt ?? run.nextAt ?? null) : null;
}

/** When the alert is tried next (a run stored before the schedules existed: its `nextAt`). */
export function alertDueAt(run: OwedFields): number | null {
  return owesAlert(run) ? (run.alertNextAt ?? run.nextAt ?? null) : null;
}

/**
 * When a finished run must be claimed again for what it owes: the earlier of its owed deliveries'
 * schedules; null when it owes the native scheduler nothing.
 */
export function deliveriesDueAt(run: OwedFields): number | null {
  const times = [failureCallDueAt(run), alertDueAt(run)].filter((t): t is number => t !== null);
  return times.length === 0 ? null : Math.min(...times);
}
