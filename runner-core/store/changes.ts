import type { SerializedError } from '../../protocol/errors.js';
import type { CallRequest, StepKind } from '../../protocol/messages.js';
import type { Attempt, StepLog } from './records.js';
import type { RunPatch } from './run-patch.js';

/**
 * One durable change. The runner batches many (from many runs) into one `apply`, which is one
 * transaction: this is what makes a commit per step cheap.
 */
export type Change =
  | {
      type: 'step-started';
      runId: string;
      index: number;
      name: string;
      kind: StepKind;
      group: number | null;
      at: number;
    }
  /** A sleep, wait or call the runner now owes the run; the first record of a position wins. */
  | {
      type: 'step-suspended';
      runId: string;
      index: number;
      name: string;
      kind: StepKind;
      group: number | null;
      until: number | null;
      eventId: string | null;
      request: CallRequest | null;
      at: number;
    }
  /** Gives the lease back in the same transaction as the run's last change of a drive. */
  | { type: 'release'; runId: string; owner: string }
  /** The run ended: steps still running or retrying end with it. */
  | { type: 'steps-closed'; runId: string; status: 'failed' | 'cancelled'; at: number }
  | {
      type: 'step-succeeded';
      runId: string;
      index: number;
      name: string;
      kind: StepKind;
      output: string | null;
      at: number;
      durationMs: number;
      /**
       * Set when this change also records the step's start (its `started` line came in the same
       * chunk, so one row write does for both, drive/attempt.ts): the parallel group a new row gets,
       * and one more `reportedExecutions` on a row an earlier attempt made.
       */
      started?: { group: number | null };
    }
  | {
      type: 'step-failed';
      runId: string;
      index: number;
      name: string;
      kind: StepKind;
      error: SerializedError;
      /** `retrying` while retries remain, else `failed`. */
      status: 'retrying' | 'failed';
      at: number;
      durationMs: number;
    }
  /**
   * Starts of a step the runner saw but could not commit as `step-started` (its drive had lost the
   * run's lease, so fencing refused them): they only add to `reportedExecutions` of an existing
   * row, unfenced, and change nothing else. The route ran the step; the count should say so.
   */
  | { type: 'executions-reported'; runId: string; index: number; count: number }
  | { type: 'attempt'; attempt: Attempt }
  /** What one execution of a step printed (step-logs.ts); kept for every attempt, failed ones too. */
  | ({ type: 'step-logs' } & StepLog)
  | { type: 'run'; runId: string; patch: RunPatch; at: number };

/** Every run a change touches (all of them carry one). */
export function changeRunId(change: Change): string {
  return change.type === 'attempt' ? change.attempt.runId : change.runId;
}
