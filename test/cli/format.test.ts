import { describe, expect, it } from 'vitest';
import { eventLine, runStory } from '../../cli/lib/format.js';
import type { Attempt, Run, Step } from '../../api/dto.js';

/** 03:04:05.000 UTC: `time()` prints UTC, so these lines do not depend on the machine's zone. */
const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 0);
const ID = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B';
const APP_URL = 'http://127.0.0.1:3000/workflow';

function run(patch: Partial<Run> = {}): Run {
  return {
    id: ID,
    url: APP_URL,
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

function step(patch: Partial<Step> = {}): Step {
  return {
    runId: ID,
    index: 0,
    name: 'initial-step',
    kind: 'run',
    status: 'succeeded',
    outputEncoded: '"HELLO"',
    error: null,
    startedAt: T0 + 10,
    finishedAt: T0 + 15,
    durationMs: 4.1234,
    reportedExecutions: 1,
    failures: 0,
    group: 1,
    until: null,
    eventId: null,
    request: null,
    ...patch,
  };
}

function attempt(patch: Partial<Attempt> = {}): Attempt {
  return {
    runId: ID,
    seq: 1,
    startedAt: T0 + 5,
    durationMs: 48,
    requestUrl: APP_URL,
    requestHeaders: {},
    requestBody: '{}',
    responseStatus: 200,
    responseHeaders: {},
    responseBody: '',
    outcome: 'done',
    error: null,
    ...patch,
  };
}

const boom = { name: 'Error', message: 'boom' };

describe('eventLine for a run', () => {
  const cases: [string, Partial<Run>, string][] = [
    ['queued', {}, `03:04:05.000 ${ID} ○ run queued · ${APP_URL}`],
    ['running', { status: 'running', updatedAt: T0 + 4, stepsDone: 1 }, `03:04:05.004 ${ID} ▶ run running · 1 step`],
    [
      'running, waiting to retry',
      { status: 'running', updatedAt: T0 + 100, stepsDone: 1, failures: 2, nextAt: T0 + 4_100 },
      `03:04:05.100 ${ID} ▶ run running · retry 2/3 at 03:04:09.100`,
    ],
    ['sleeping', { status: 'sleeping', stepsDone: 2 }, `03:04:05.000 ${ID} ◔ run sleeping · 2 steps`],
    ['waiting', { status: 'waiting' }, `03:04:05.000 ${ID} ◌ run waiting · 0 steps`],
    [
      'completed',
      { status: 'completed', updatedAt: T0 + 53, finishedAt: T0 + 53, stepsDone: 2 },
      `03:04:05.053 ${ID} ✓ run completed · 2 steps in 53ms`,
    ],
    [
      'failed with an error',
      { status: 'failed', updatedAt: T0 + 1_500, finishedAt: T0 + 1_500, stepsDone: 1, error: boom },
      `03:04:06.500 ${ID} ✗ run failed · 1 step in 1.50s: boom`,
    ],
    [
      'failed without an error',
      { status: 'failed', finishedAt: T0 + 2 },
      `03:04:05.000 ${ID} ✗ run failed · 0 steps in 2.0ms: failed`,
    ],
    [
      'cancelled',
      { status: 'cancelled', updatedAt: T0 + 2_000, finishedAt: T0 + 2_000, stepsDone: 1 },
      `03:04:07.000 ${ID} ⊘ run cancelled · 1 step in 2.00s`,
    ],
    [
      'running, the app unreachable',
      { status: 'running', updatedAt: T0 + 100, stepsDone: 1, unreachableSince: T0 + 50, nextAt: T0 + 2_100 },
      `03:04:05.100 ${ID} ▶ run running · app unreachable since 03:04:05.050, next try at 03:04:07.100 · 1 step`,
    ],
    [
      'queued behind flow control',
      { status: 'queued', flowKey: 'tenant-42', queuedReason: 'flow control `tenant-42`: 5 of 5 running' },
      `03:04:05.000 ${ID} ○ run queued · waiting: flow control \`tenant-42\`: 5 of 5 running · ${APP_URL}`,
    ],
    [
      'failed, its failureFunction delivered',
      {
        status: 'failed',
        updatedAt: T0 + 1_500,
        finishedAt: T0 + 1_000,
        stepsDone: 1,
        error: boom,
        failureCall: 'delivered',
        failureCallAttempts: 3,
      },
      `03:04:06.500 ${ID} ✗ run failed · failureFunction delivered (3 attempts) · 1 step in 1.00s: boom`,
    ],
  ];
  it.each(cases)('%s', (_status, patch, line) => {
    expect(eventLine({ type: 'run', run: run(patch) })).toBe(line);
  });
});

describe('eventLine for a step', () => {
  const cases: [string, Partial<Step>, string][] = [
    ['succeeded', {}, `03:04:05.015 ${ID} ✓   step 0 initial-step succeeded (4.1ms)`],
    [
      'running (no end yet: the start time, no duration)',
      { index: 1, name: 'second-step', status: 'running', finishedAt: null, durationMs: null, outputEncoded: null },
      `03:04:05.010 ${ID} ▶   step 1 second-step running`,
    ],
    [
      'retrying, with the error',
      { index: 1, name: 'second-step', status: 'retrying', error: boom, durationMs: 12, failures: 1 },
      `03:04:05.015 ${ID} ↻   step 1 second-step retrying (12ms): boom`,
    ],
    [
      'failed, with the error',
      { status: 'failed', error: boom, durationMs: 2_345 },
      `03:04:05.015 ${ID} ✗   step 0 initial-step failed (2.35s): boom`,
    ],
    [
      're-executed',
      { reportedExecutions: 3 },
      `03:04:05.015 ${ID} ✓   step 0 initial-step succeeded (4.1ms) · executed 3×`,
    ],
    [
      'succeeded after a failure (the old error is not shown)',
      { reportedExecutions: 2, failures: 1, error: boom },
      `03:04:05.015 ${ID} ✓   step 0 initial-step succeeded (4.1ms) · executed 2×`,
    ],
    ['cancelled', { status: 'cancelled', durationMs: null }, `03:04:05.015 ${ID} ⊘   step 0 initial-step cancelled`],
  ];
  it.each(cases)('%s', (_title, patch, line) => {
    expect(eventLine({ type: 'step', step: step(patch) })).toBe(line);
  });
});

describe('eventLine for an attempt', () => {
  it.each([
    // Stamped when the attempt ended (started + 48ms), so it follows the steps it streamed.
    ['answered', {}, `03:04:05.053 ${ID} ·   attempt 1 · HTTP 200 · done (48ms)`],
    [
      'answered 500',
      { seq: 2, responseStatus: 500, outcome: 'failed', error: boom },
      `03:04:05.053 ${ID} ·   attempt 2 · HTTP 500 · failed (48ms): boom`,
    ],
    [
      'no response',
      {
        seq: 3,
        responseStatus: null,
        durationMs: 5_000,
        outcome: 'error',
        error: { name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:3000' },
      },
      `03:04:10.005 ${ID} ·   attempt 3 · no response · error (5.00s): connect ECONNREFUSED 127.0.0.1:3000`,
    ],
  ] as [string, Partial<Attempt>, string][])('%s', (_title, patch, line) => {
    expect(eventLine({ type: 'attempt', attempt: attempt(patch) })).toBe(line);
  });
});

describe('runStory', () => {
  it('a completed run: queued, then steps by start and attempts by end, then the end', () => {
    // Sequential steps: each in a group of its own (a shared group would read as parallel).
    const steps = [
      step(),
      step({ index: 1, name: 'second-step', group: 2, startedAt: T0 + 20, finishedAt: T0 + 21, durationMs: 0.5 }),
    ];
    const done = run({ status: 'completed', updatedAt: T0 + 53, finishedAt: T0 + 53, stepsDone: 2, attempts: 1 });
    expect(runStory(done, steps, [attempt()])).toEqual([
      `03:04:05.000 ${ID} ○ run queued · POST ${APP_URL}`,
      `03:04:05.015 ${ID} ✓   step 0 initial-step succeeded (4.1ms)`,
      `03:04:05.021 ${ID} ✓   step 1 second-step succeeded (0.5ms)`,
      `03:04:05.053 ${ID} ·   attempt 1 · HTTP 200 · done (48ms)`,
      `03:04:05.053 ${ID} ✓ run completed · 2 steps in 53ms`,
    ]);
  });

  it('a run that retried a step and then failed: one line for the step, one per attempt', () => {
    const steps = [
      step(),
      step({
        index: 1,
        name: 'second-step',
        group: 2,
        status: 'failed',
        startedAt: T0 + 20,
        finishedAt: T0 + 3_020,
        durationMs: 3,
        reportedExecutions: 3,
        failures: 3,
        error: boom,
      }),
    ];
    const attempts = [
      attempt({ outcome: 'failed', error: boom }),
      attempt({ seq: 2, startedAt: T0 + 1_000, outcome: 'failed', error: boom }),
      attempt({ seq: 3, startedAt: T0 + 3_000, outcome: 'failed', error: boom }),
    ];
    const failed = run({
      status: 'failed',
      updatedAt: T0 + 3_050,
      finishedAt: T0 + 3_050,
      stepsDone: 1,
      failures: 3,
      error: boom,
    });
    expect(runStory(failed, steps, attempts)).toEqual([
      `03:04:05.000 ${ID} ○ run queued · POST ${APP_URL}`,
      `03:04:05.015 ${ID} ✓   step 0 initial-step succeeded (4.1ms)`,
      // Placed by when the step first started, stamped with when it last finished.
      `03:04:08.020 ${ID} ✗   step 1 second-step failed (3.0ms) · executed 3×: boom`,
      `03:04:05.053 ${ID} ·   attempt 1 · HTTP 200 · failed (48ms): boom`,
      `03:04:06.048 ${ID} ·   attempt 2 · HTTP 200 · failed (48ms): boom`,
      `03:04:08.048 ${ID} ·   attempt 3 · HTTP 200 · failed (48ms): boom`,
      `03:04:08.050 ${ID} ✗ run failed · 1 step in 3.05s: boom`,
    ]);
  });

  it('a run still waiting to retry ends with its next attempt time', () => {
    const retrying = step({ index: 0, status: 'retrying', error: boom, durationMs: 2 });
    const waiting = run({ status: 'running', updatedAt: T0 + 60, failures: 1, nextAt: T0 + 1_060 });
    expect(runStory(waiting, [retrying], [attempt({ outcome: 'failed', error: boom })]).at(-1)).toBe(
      `03:04:05.060 ${ID} ▶ run running · retry 1/3 at 03:04:06.060`,
    );
  });

  it('a run with nothing yet is two lines', () => {
    expect(runStory(run(), [], [])).toEqual([
      `03:04:05.000 ${ID} ○ run queued · POST ${APP_URL}`,
      `03:04:05.000 ${ID} ○ run queued · ${APP_URL}`,
    ]);
  });
});

describe('child workflows (context.invoke) in wf logs', () => {
  const PARENT = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9PAR';
  const CHILD = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9CHI';
  const request = { url: 'http://127.0.0.1:3000/child', method: 'POST', headers: {}, body: '{}' };

  it('prints the child run of an invoke step, or that it has not started yet', () => {
    const started = step({
      kind: 'invoke',
      name: 'resize',
      status: 'running',
      finishedAt: null,
      durationMs: null,
      eventId: `wf-child:${CHILD}`,
      childRunId: CHILD,
      request,
    });
    expect(eventLine({ type: 'step', step: started })).toBe(
      `03:04:05.010 ${ID} ▶   step 0 invoke resize running · child ${CHILD} · http://127.0.0.1:3000/child`,
    );
    const notYet = step({
      kind: 'invoke',
      name: 'resize',
      status: 'running',
      finishedAt: null,
      durationMs: null,
      request,
    });
    expect(eventLine({ type: 'step', step: notYet })).toContain('· child not started yet ·');
  });

  it('prints the parent of a child run on its run line', () => {
    const child = run({
      status: 'completed',
      finishedAt: T0 + 53,
      updatedAt: T0 + 53,
      stepsDone: 1,
      idempotencyKey: `invoke:${PARENT}:2`,
      parentRunId: PARENT,
      parentStepIndex: 2,
    });
    expect(eventLine({ type: 'run', run: child })).toBe(
      `03:04:05.053 ${ID} ✓ run completed · child of ${PARENT} step 2 · 1 step in 53ms`,
    );
    // Read from the key when the record carries no API fields.
    expect(eventLine({ type: 'run', run: run({ idempotencyKey: `invoke:${PARENT}:0` }) })).toContain(
      `child of ${PARENT} step 0`,
    );
  });
});
