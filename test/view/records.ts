import type { Attempt, Run, Step } from '../../api/dto.js';
import { encodeOutcome, type Outcome } from '../../protocol/outcome.js';

/** Records for the view model's table tests: complete, with only what a case changes patched in. */

export const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 0);
export const ID = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B';

export function run(patch: Partial<Run> = {}): Run {
  return {
    id: ID,
    url: 'http://127.0.0.1:3000/workflow',
    status: 'queued',
    body: '{}',
    headers: {},
    createdAt: T0,
    updatedAt: T0,
    finishedAt: null,
    nextAt: null,
    failures: 0,
    retries: 3,
    retryDelayMs: 1000,
    stepsDone: 0,
    attempts: 0,
    outputEncoded: null,
    error: null,
    idempotencyKey: null,
    unreachableSince: null,
    failureCall: null,
    failureCallAttempts: 0,
    ...patch,
  };
}

export function step(patch: Partial<Step> = {}): Step {
  return {
    runId: ID,
    index: 0,
    name: 'first',
    kind: 'run',
    status: 'running',
    outputEncoded: null,
    error: null,
    startedAt: T0,
    finishedAt: null,
    durationMs: null,
    reportedExecutions: 1,
    failures: 0,
    group: 0,
    until: null,
    eventId: null,
    request: null,
    ...patch,
  };
}

/** An attempt whose response streamed these outcomes (encoded as the route encodes them), then `tail`. */
export function attempt(seq: number, outcomes: readonly Outcome[], tail = ''): Attempt {
  return {
    runId: ID,
    seq,
    startedAt: T0,
    durationMs: 5,
    requestUrl: 'http://127.0.0.1:3000/workflow',
    requestHeaders: {},
    requestBody: '{}',
    responseStatus: 200,
    responseHeaders: {},
    responseBody: outcomes.map(encodeOutcome).join('') + tail,
    outcome: 'done',
    error: null,
  };
}
