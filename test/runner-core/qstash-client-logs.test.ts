import { describe, expect, it } from 'vitest';
import { encodeValue } from '../../protocol/values.js';
import { workflowRunLog } from '../../runner-core/qstash/client/logs.js';
import { parseCancelQuery, parseLogsQuery } from '../../runner-core/qstash/client/query.js';
import type { Run, Step } from '../../runner-core/store/types.js';
import { T0 } from './store-fixtures.js';

const run = (overrides: Partial<Run> = {}): Run =>
  ({
    id: 'wfr_abc',
    url: 'http://127.0.0.1:3000/api/workflow',
    status: 'running',
    body: '{"order":7}',
    headers: { 'content-type': 'application/json' },
    createdAt: T0,
    updatedAt: T0,
    finishedAt: null,
    nextAt: null,
    failures: 0,
    retries: 3,
    retryDelayMs: 1000,
    stepsDone: 0,
    attempts: 0,
    output: null,
    error: null,
    idempotencyKey: null,
    unreachableSince: null,
    failureCall: null,
    failureCallAttempts: 0,
    ...overrides,
  }) as Run;

const step = (index: number, overrides: Partial<Step> = {}): Step =>
  ({
    runId: 'wfr_abc',
    index,
    name: `step ${index}`,
    kind: 'run',
    status: 'succeeded',
    output: encodeValue(`out ${index}`, 'test') ?? null,
    error: null,
    startedAt: T0 + index,
    finishedAt: T0 + index,
    durationMs: 0,
    reportedExecutions: 1,
    failures: 0,
    group: null,
    until: null,
    eventId: null,
    request: null,
    ...overrides,
  }) as Step;

describe('workflowRunLog', () => {
  it('maps a running run: the initial payload first as `init`, then each step, RUN_STARTED, no completion time', () => {
    const log = workflowRunLog(run(), [step(1)]);
    expect(log).toEqual({
      workflowRunId: 'wfr_abc',
      workflowUrl: 'http://127.0.0.1:3000/api/workflow',
      workflowState: 'RUN_STARTED',
      workflowRunCreatedAt: T0,
      steps: [
        {
          type: 'sequential',
          steps: [
            {
              stepId: 0,
              stepName: 'init',
              stepType: 'Initial',
              callType: 'step',
              messageId: 'wfr_abc:0',
              out: '{"order":7}',
              retries: 3,
              concurrent: 1,
              state: 'STEP_SUCCESS',
              createdAt: T0,
              headers: { 'content-type': ['application/json'] },
            },
          ],
        },
        {
          type: 'sequential',
          steps: [
            {
              stepId: 1,
              stepName: 'step 1',
              stepType: 'Run',
              callType: 'step',
              messageId: 'wfr_abc:1',
              out: 'out 1',
              retries: 3,
              concurrent: 1,
              state: 'STEP_SUCCESS',
              createdAt: T0 + 1,
              headers: {},
            },
          ],
        },
      ],
    });
  });

  it('groups the steps of one Promise.all as parallel, with their count as concurrent', () => {
    const log = workflowRunLog(run(), [
      step(1),
      step(2, { group: 2 }),
      step(3, { group: 2, status: 'running', output: null }),
      step(4),
    ]);
    const groups = log.steps as { type: string; steps: Record<string, unknown>[] }[];
    expect(groups.map((g) => g.type)).toEqual(['sequential', 'sequential', 'parallel', 'sequential']);
    expect(groups[2]!.steps.map((s) => [s.stepId, s.concurrent, s.state])).toEqual([
      [2, 2, 'STEP_SUCCESS'],
      [3, 2, 'STEP_PROGRESS'],
    ]);
  });

  it("maps states and types, a wait's deadline and outcome, the response of a finished run, and the label", () => {
    const wait = step(2, {
      kind: 'wait',
      until: T0 + 60_000,
      output: encodeValue({ eventData: 'x', timeout: true }, 'test') ?? null,
    });
    const log = workflowRunLog(
      run({ status: 'completed', finishedAt: T0 + 9, output: encodeValue({ total: 3 }, 'test') ?? null }),
      [step(1, { kind: 'call' }), wait],
      { label: 'billing', retryDelay: '1000' },
    );
    expect(log).toMatchObject({
      workflowState: 'RUN_SUCCESS',
      workflowRunCompletedAt: T0 + 9,
      workflowRunResponse: '{"total":3}',
      label: 'billing',
      labels: ['billing'],
    });
    const [, call, waited] = (log.steps as { steps: Record<string, unknown>[] }[]).map((g) => g.steps[0]!);
    expect(call).toMatchObject({ stepType: 'Call', retryDelay: '1000' });
    expect(waited).toMatchObject({
      stepType: 'Wait',
      waitTimeoutDeadline: T0 + 60_000,
      waitTimeout: true,
      out: { eventData: 'x', timeout: true },
    });
    expect(workflowRunLog(run({ status: 'failed', finishedAt: T0 }), []).workflowState).toBe('RUN_FAILED');
    expect(workflowRunLog(run({ status: 'cancelled', finishedAt: T0 }), []).workflowState).toBe('RUN_CANCELED');
  });
});

describe('Client query strings', () => {
  it('reads what Client.cancel sends for ids, a URL prefix, an exact URL, and all', () => {
    expect(parseCancelQuery(new URLSearchParams('workflowRunIds=wfr_a&workflowRunIds=wfr_b'))).toMatchObject({
      workflowRunIds: ['wfr_a', 'wfr_b'],
    });
    expect(parseCancelQuery(new URLSearchParams('workflowUrl=http%3A%2F%2Fa%2Fwf&count=100'))).toMatchObject({
      workflowUrl: 'http://a/wf',
      exactUrl: false,
      count: 100,
      workflowRunIds: [],
    });
    expect(
      parseCancelQuery(
        new URLSearchParams('workflowUrl=http%3A%2F%2Fa%2Fwf&workflowUrlExactMatch=true&label=x&fromDate=5'),
      ),
    ).toMatchObject({ exactUrl: true, label: 'x', fromDate: 5 });
    expect(parseCancelQuery(new URLSearchParams('count=10&cursor=wfr_z'))).toMatchObject({
      count: 10,
      cursor: 'wfr_z',
    });
  });

  it('reads what Client.logs sends', () => {
    const query = parseLogsQuery(
      new URLSearchParams(
        'groupBy=workflowRunId&cursor=c&count=5&state=RUN_FAILED&workflowCreatedAt=123&workflowRunId=wfr_1&workflowUrl=https%3A%2F%2Fx.com',
      ),
    );
    expect(query).toEqual({
      exactUrl: true,
      count: 5,
      cursor: 'c',
      state: 'RUN_FAILED',
      workflowCreatedAt: 123,
      workflowRunId: 'wfr_1',
      workflowUrl: 'https://x.com',
    });
    expect(parseLogsQuery(new URLSearchParams('groupBy=workflowRunId')).count).toBe(10);
  });

  it('refuses, by name, a parameter it does not honour and values it cannot read', () => {
    expect(() => parseCancelQuery(new URLSearchParams('callerIp=1.2.3.4'))).toThrow(/`callerIp` is not supported/);
    expect(() => parseCancelQuery(new URLSearchParams(''))).toThrow(/cancels nothing/);
    expect(() => parseCancelQuery(new URLSearchParams('count=0'))).toThrow(/`count`/);
    expect(() => parseCancelQuery(new URLSearchParams('count=1&count=2'))).toThrow(/one `count`/);
    expect(() => parseLogsQuery(new URLSearchParams('count=5'))).toThrow(/groupBy=workflowRunId/);
    expect(() => parseLogsQuery(new URLSearchParams('groupBy=workflowRunId&state=DONE'))).toThrow(/RUN_STARTED/);
    expect(() => parseLogsQuery(new URLSearchParams('groupBy=workflowRunId&fromDate=yesterday'))).toThrow(/`fromDate`/);
  });
});
