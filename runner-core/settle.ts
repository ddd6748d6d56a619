import type { SerializedError } from '../protocol/errors.js';
import { MAX_DELAY_MS, nextDelay } from './retry.js';
import type { AttemptResult } from './attempt.js';
import type { Change, Run, RunPatch } from './store/types.js';

/**
 * What an attempt's end means for the run: the changes to commit and the run's next state.
 * Pure, so the retry rules are tested as a table.
 */
export function settle(run: Run, result: AttemptResult, now: number, random: () => number = Math.random): { changes: Change[]; patch: RunPatch } {
  const end = result.end;
  const base: RunPatch = { attempts: run.attempts + 1 };
  if (end.t === 'done') {
    return { changes: [], patch: { ...base, status: 'completed', output: end.output ?? null, finishedAt: now, nextAt: null, failures: 0 } };
  }
  if (end.t === 'continue') {
    return { changes: [], patch: { ...base, status: 'running', nextAt: now, failures: 0 } };
  }
  // A failure: the counter restarts whenever the attempt made progress.
  const failures = (result.progressed ? 0 : run.failures) + 1;
  const willRetry = end.retryable && failures <= run.retries;
  const changes: Change[] = [];
  if (end.t === 'failed' && end.step) {
    const { index, name, kind, durationMs } = end.step;
    changes.push({ type: 'step-failed', runId: run.id, index, name, kind, error: end.error, status: willRetry ? 'retrying' : 'failed', at: now, durationMs });
  }
  if (willRetry) {
    const delay = Math.min(end.retryAfterMs ?? nextDelay(failures, { retries: run.retries, baseMs: run.retryDelayMs }, random), MAX_DELAY_MS);
    return { changes, patch: { ...base, status: 'running', failures, nextAt: now + delay } };
  }
  const error: SerializedError = end.error;
  return { changes, patch: { ...base, status: 'failed', failures, error, finishedAt: now, nextAt: null } };
}
