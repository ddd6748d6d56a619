import type { FlowControl } from '../../protocol/flow-control.js';
import type { Run as RunDto, Step as StepDto } from '../../api/dto.js';

// The fields of runs, steps and attempts are the API contract's (api/dto.ts, the one authority);
// the store's records differ only in how they hold a value: `output` is the devalue text the
// route replays from. The API edge maps records to DTOs (runner-core/api/dto-map.ts).
export { FINISHED_RUN_STATUSES, RUN_STATUSES } from '../../api/dto.js';
export type { AlertState, Attempt, FailureCallState, RunStatus, StepLog, StepStatus } from '../../api/dto.js';

/** A run as stored; `output` is its devalue text (null when none). */
export interface Run extends Omit<RunDto, 'output' | 'outputEncoded'> {
  output: string | null;
  /** The key and limits the run was started with (store only: the API shows `flowKey`); absent without flow control. */
  flowControl?: FlowControl;
  /** When a failed run's failureFunction call is tried next, while it is owed (store only; run-end/). */
  failureCallNextAt?: number | null;
  /** When a failed run's alert is tried next, while it is owed (store only; run-end/). */
  alertNextAt?: number | null;
}

/** A step as stored; `output` is its devalue text (a call's answer; null when none). */
export interface Step extends Omit<StepDto, 'output' | 'outputEncoded'> {
  output: string | null;
}

/** A page of runs, newest first; `nextCursor` is the last run's id when another page exists. */
export interface RunPage {
  runs: Run[];
  nextCursor: string | null;
}
