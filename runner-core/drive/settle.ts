import type { SerializedError } from '../../protocol/errors.js';
import { Header } from '../../protocol/headers.js';
import type { AttemptError, AttemptResult } from './attempt.js';
import { MAX_DELAY_MS, nextDelay } from './retry.js';
import type { Change, Run, RunPatch } from '../store/types.js';
import { runnerKind } from '../step-kinds/index.js';
import { cancellation, completion, failure } from '../run-end/end.js';
import { stepLogsChange } from './step-logs.js';
import {
  DEFAULT_UNREACHABLE_POLICY,
  type SettleClock,
  unreachableDelay,
  type UnreachablePolicy,
} from './unreachable.js';

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
 * - the app unreachable (see `AttemptError.unreachable`): not a failure; `failures` stays, the
 *   outage's start is kept in `unreachableSince` and the run is tried again on the unreachable
 *   schedule, until the outage outlasts the horizon. Any answer ends the outage.
 * - a run that fails owes its route a failureFunction call when the route said it has one (or never
 *   answered), and an alert when `alerts` (the runner has a webhook): run-end/end.ts builds that end,
 *   as it builds every run's end.
 */
export function settle(
  run: Run,
  result: AttemptResult,
  at: SettleClock & { alerts?: boolean },
): { changes: Change[]; patch: RunPatch } {
  const { now, random = Math.random, unreachable = DEFAULT_UNREACHABLE_POLICY, alerts = false } = at;
  const end = result.end;
  if (end.t === 'error' && end.unreachable)
    return settleUnreachable(run, result, end, now, random, unreachable, alerts);
  const base: RunPatch = {
    attempts: run.attempts + 1,
    ...(run.unreachableSince !== null && { unreachableSince: null }),
  };
  switch (end.t) {
    case 'done':
      return withBase(base, completion(end.output ?? null, now));
    case 'continue':
      return { changes: [], patch: { ...base, status: 'running', nextAt: now, failures: 0 } };
    case 'cancel':
      return withBase(base, cancellation(run.id, now));
    case 'suspend': {
      // A kind the wire table knows but this runner cannot resolve (registered on one side only)
      // would pend forever: the run fails, naming it.
      const unknown = end.steps.find((s) => runnerKind(s.kind) === undefined);
      if (unknown) return failRun(run, result, unresolvableKind(unknown.kind), now, base, alerts);
      const changes: Change[] = end.steps.map((s) => ({
        type: 'step-suspended',
        runId: run.id,
        index: s.index,
        name: s.name,
        kind: s.kind,
        group: s.group,
        // The kind's module says which columns hold what the route described (step-kinds/).
        ...runnerKind(s.kind)!.stored(s as never),
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
    Math.min(
      end.retryAfterMs ?? nextDelay(failures, { retries, baseMs: step?.retryDelayMs ?? run.retryDelayMs }, random),
      MAX_DELAY_MS,
    );

  if (step) {
    const { index, name, kind, durationMs } = step;
    const failed: Change = {
      type: 'step-failed',
      runId: run.id,
      index,
      name,
      kind,
      error: end.error,
      status: willRetry ? 'retrying' : 'failed',
      at: now,
      durationMs,
    };
    // A failed execution keeps what it printed, so each retry's lines stay visible in its attempt.
    const logs = stepLogsChange(run.id, result.attempt.seq, step, 'failed', now);
    const changes = logs ? [failed, logs] : [failed];
    if (willRetry) return { changes, patch: { ...base, status: 'running', failures, nextAt: now + delay() } };
    return { changes, patch: { ...base, status: 'running', failures: 0, nextAt: now } };
  }
  if (willRetry) return { changes: [], patch: { ...base, status: 'running', failures, nextAt: now + delay() } };
  return failRun(run, result, end.error, now, { ...base, failures }, alerts);
}

/** The run's fields this attempt changed, under the end's own (an end decides what it says). */
function withBase(
  base: RunPatch,
  ending: { changes: Change[]; patch: RunPatch },
): { changes: Change[]; patch: RunPatch } {
  return { changes: ending.changes, patch: { ...base, ...ending.patch } };
}

/** The run ends `failed`, owing its failureFunction call when the route has one (run-end/end.ts). */
function failRun(
  run: Run,
  result: AttemptResult,
  error: SerializedError,
  now: number,
  base: RunPatch,
  alerts: boolean,
): { changes: Change[]; patch: RunPatch } {
  // The route says in every answer whether it has a failureFunction; without an answer, ask anyway.
  const headers = result.attempt.responseHeaders;
  const owesCall = !headers || headers[Header.FailureFunction] === '1';
  return withBase(base, failure(run, { error, at: now, failureCall: owesCall ? 'native' : false, alerts }));
}

function settleUnreachable(
  run: Run,
  result: AttemptResult,
  end: AttemptError,
  now: number,
  random: () => number,
  policy: UnreachablePolicy,
  alerts: boolean,
): { changes: Change[]; patch: RunPatch } {
  // A stream cut after steps were committed: the app answered, the outage (if any) starts again now.
  // Without progress the start is kept, so a route that always dies mid-step still meets the horizon.
  const since = result.progressed ? now : (run.unreachableSince ?? now);
  const base: RunPatch = { attempts: run.attempts + 1 };
  if (now - since >= policy.horizonMs)
    return failRun(run, result, unreachableError(run.url, since, now, policy, end.error), now, base, alerts);
  return {
    changes: [],
    patch: {
      ...base,
      status: 'running',
      unreachableSince: since,
      nextAt: now + unreachableDelay(since, now, policy, end.retryAfterMs, random),
    },
  };
}

function unresolvableKind(kind: string): SerializedError {
  return {
    name: 'ProtocolError',
    code: 'UNKNOWN_STEP_KIND',
    message: `The route suspended a step of kind "${kind}", which this runner does not resolve (no runner module is registered for it).`,
  };
}

/** Why a run gave up on an app that stayed unreachable: since when, for how long, and the last error. */
function unreachableError(
  url: string,
  since: number,
  now: number,
  policy: UnreachablePolicy,
  last: SerializedError,
): SerializedError {
  const span = (ms: number): string =>
    ms >= 3_600_000
      ? `${+(ms / 3_600_000).toFixed(1)} h`
      : ms >= 60_000
        ? `${+(ms / 60_000).toFixed(1)} min`
        : `${+(ms / 1000).toFixed(1)} s`;
  return {
    name: 'AppUnreachableError',
    code: 'APP_UNREACHABLE',
    message:
      `The app at ${url} was unreachable since ${new Date(since).toISOString()} (${span(now - since)}), longer than the runner's ` +
      `unreachable horizon of ${span(policy.horizonMs)} (--unreachable-horizon); last error: ${last.message}`,
  };
}
