import type { Step, StepStatus } from '../api/dto.js';

/*
 * Snapshots (`GET /v1/runs/:id`) and events travel on different connections, so an older copy
 * of a step can arrive after a newer one. Both dashboards keep the newer copy by this one rule.
 */

const SETTLED: ReadonlySet<StepStatus> = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * How far a step has come. Every execution starts (`reportedExecutions` + 1, unfinished) and ends
 * (`finishedAt` set), so the number rises with each transition. Failures count too, because
 * `reportedExecutions` is a lower bound: an execution whose `started` line was lost still adds a
 * failure when it throws.
 * @example stepProgress({ reportedExecutions: 1, failures: 0, finishedAt: 5, … }) // 5
 */
export function stepProgress(step: Pick<Step, 'reportedExecutions' | 'failures' | 'finishedAt'>): number {
  return step.reportedExecutions * 4 + step.failures * 2 + (step.finishedAt === null ? 0 : 1);
}

/**
 * The copy to keep: the one further along; on a tie the settled one (a cancel after a retry
 * wait changes only the status), else the incoming one.
 * @example newerStep(held, fromSnapshot) // held, when the snapshot is older
 */
export function newerStep(current: Step | undefined, incoming: Step): Step {
  if (!current) return incoming;
  const a = stepProgress(current);
  const b = stepProgress(incoming);
  if (a !== b) return a > b ? current : incoming;
  return SETTLED.has(current.status) && !SETTLED.has(incoming.status) ? current : incoming;
}
