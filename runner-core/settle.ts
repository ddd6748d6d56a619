import type { SerializedError } from '../protocol/errors.js';
import type { AttemptResult } from './attempt.js';
import { MAX_DELAY_MS, nextDelay } from './retry.js';
import type { Change, Run, RunPatch } from './store/types.js';

/**
 * What an attempt's end means for the run: the changes to commit and the run's next state.
 * Pure, so the retry rules are tested as a table.
 *
 * - done / cancel: the run ends. continue: drive again now.
 * - suspend: the sleeps, waits and calls are recorded and the run stays due now; the runner
 *   resolves them next (a crash in between only repeats that).
 * - a step failure is retried with backoff (the step's own policy first); once its retries are spent
 *   the step fails for good and the run is driven once more, so the workflow sees the error and may
 *   catch it. A failure outside any step, or one no retry can fix, fails the run.
 */
export function settle(run: Run, result: AttemptResult, now: number, random: () => number = Math.random): { changes: Change[]; patch: RunPatch } {
  const end = result.end;
  const base: RunPatch = { attempts: run.attempts + 1 };
  switch (end.t) {
    case 'done':
      return { changes: [], patch: { ...base, status: 'completed', output: end.output ?? null, finishedAt: now, nextAt: null, failures: 0 } };
    case 'continue':
      return { changes: [], patch: { ...base, status: 'running', nextAt: now, failures: 0 } };
    case 'cancel':
      return {
        changes: [{ type: 'steps-closed', runId: run.id, status: 'cancelled', at: now }],
        patch: { ...base, status: 'cancelled', finishedAt: now, nextAt: null },
      };
    case 'suspend': {
      const changes: Change[] = end.steps.map((s) => ({
        type: 'step-suspended',
        runId: run.id,
        index: s.index,
        name: s.name,
        kind: s.kind,
        group: s.group,
        until: s.kind === 'call' ? null : s.until,
        eventId: s.kind === 'wait' ? s.eventId : null,
        request: s.kind === 'call' ? s.request : null,
        at: now,
      }));
      return { changes, patch: { ...base, status: 'running', nextAt: now, failures: 0 } };
    }
  }
  // A failure: the counter restarts whenever the attempt made progress.
  const failures = (result.progressed ? 0 : run.failures) + 1;
  const step = end.t === 'failed' ? end.step : undefined;
  const retries = step?.retries ?? run.retries;
  const willRetry = end.retryable && failures <= retries;
  const delay = (): number =>
    Math.min(end.retryAfterMs ?? nextDelay(failures, { retries, baseMs: step?.retryDelayMs ?? run.retryDelayMs }, random), MAX_DELAY_MS);

  if (step) {
    const { index, name, kind, durationMs } = step;
    const failed: Change = { type: 'step-failed', runId: run.id, index, name, kind, error: end.error, status: willRetry ? 'retrying' : 'failed', at: now, durationMs };
    if (willRetry) return { changes: [failed], patch: { ...base, status: 'running', failures, nextAt: now + delay() } };
    return { changes: [failed], patch: { ...base, status: 'running', failures: 0, nextAt: now } };
  }
  if (willRetry) return { changes: [], patch: { ...base, status: 'running', failures, nextAt: now + delay() } };
  const error: SerializedError = end.error;
  return {
    changes: [{ type: 'steps-closed', runId: run.id, status: 'failed', at: now }],
    patch: { ...base, status: 'failed', failures, error, finishedAt: now, nextAt: null },
  };
}
