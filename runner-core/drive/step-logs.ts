import { boundStepLogs, type StepLogs } from '../../protocol/step-logs.js';
import type { StepRef } from '../../protocol/outcome.js';
import type { Change } from '../store/types.js';

/**
 * The store change keeping what one step execution printed, keyed by the attempt it ran in (its
 * `seq`), or nothing when the route sent no lines (the common case costs one property check).
 */
export function stepLogsChange(
  runId: string,
  attempt: number,
  step: StepRef & { logs?: StepLogs },
  status: 'succeeded' | 'failed',
  at: number,
): Change | undefined {
  if (!step.logs) return undefined;
  const logs = boundStepLogs(step.logs);
  return {
    type: 'step-logs',
    runId,
    index: step.index,
    name: step.name,
    attempt,
    status,
    at,
    lines: logs.lines,
    dropped: logs.dropped ?? 0,
  };
}
