import type { SerializedError } from '../../protocol/errors.js';
import type { Change, Run, RunPatch } from '../store/types.js';
import { deliveriesDueAt, owedAlert, owedFailureCall } from './owed.js';

/**
 * How a run ends, built in one place for every path that ends one: the native driver's settle
 * (settle.ts), the actions (`cancelRun`), and the QStash engine (the SDK's DELETE, `Client.cancel`,
 * a message failed for good). Each returns the changes to commit and the run's patch; a caller may
 * merge its own fields into the patch (the attempt counter) and commit it with its attempt log, in
 * one transaction. What follows the commit (events, the trace, parents and children, the engine's
 * messages) is `RunEnds.ended` (ended.ts).
 */
export interface RunEnding {
  changes: Change[];
  patch: RunPatch;
}

/** The workflow returned: `output` is its value's devalue text (null for none). */
export function completion(output: string | null, at: number): RunEnding {
  return {
    changes: [],
    patch: { status: 'completed', output, finishedAt: at, nextAt: null, failures: 0, unreachableSince: null },
  };
}

/** Cancelled (by the workflow, an action or the SDK): its steps still running end with it. */
export function cancellation(runId: string, at: number): RunEnding {
  return {
    changes: [{ type: 'steps-closed', runId, status: 'cancelled', at }],
    patch: { status: 'cancelled', finishedAt: at, nextAt: null },
  };
}

export interface FailureOptions {
  error: SerializedError;
  at: number;
  /**
   * Whether a failureFunction is owed: `native` for a route the driver calls (it said it has one, or
   * never answered), `message` for an Upstash run whose failure callback the QStash engine already
   * queued as a message (marked pending, delivered on that message's schedule), `false` for none.
   */
  failureCall: 'native' | 'message' | false;
  /** The runner has an alert webhook: the run owes an alert. */
  alerts: boolean;
}

/**
 * The run failed: its unfinished steps fail with it, and what it owes (its failureFunction call, its
 * alert) is owed in the same commit, so a crash right after still delivers them. Each owed delivery
 * is due now on its own schedule; `nextAt` is the earliest the native scheduler must act on.
 */
export function failure(run: Pick<Run, 'id' | 'protocol'>, options: FailureOptions): RunEnding {
  const { error, at } = options;
  const patch: RunPatch = { status: 'failed', error, finishedAt: at };
  if (options.failureCall === 'native') Object.assign(patch, owedFailureCall(at));
  if (options.failureCall === 'message') patch.failureCall = 'pending';
  if (options.alerts) Object.assign(patch, owedAlert(at));
  patch.nextAt = deliveriesDueAt({
    protocol: run.protocol,
    nextAt: null,
    failureCall: patch.failureCall ?? null,
    alert: patch.alert ?? null,
    ...pickSchedules(patch),
  });
  return { changes: [{ type: 'steps-closed', runId: run.id, status: 'failed', at }], patch };
}

function pickSchedules(patch: RunPatch): Pick<RunPatch, 'failureCallNextAt' | 'alertNextAt'> {
  return { failureCallNextAt: patch.failureCallNextAt ?? null, alertNextAt: patch.alertNextAt ?? null };
}
