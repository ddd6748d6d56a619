import { ProtocolError } from '../protocol/errors.js';
import { parseStepKind } from '../protocol/messages.js';
import {
  describe,
  expectBoolean,
  expectInteger,
  expectNumber,
  expectObject,
  expectSerializedError,
  expectString,
  expectStringRecord,
  optionalString,
  type Fields,
} from '../protocol/validate.js';
import { parseStepLogs } from '../protocol/step-logs.js';
import {
  ALERT_STATES,
  RUN_STATUSES,
  type AlertState,
  type Attempt,
  type FailureCallState,
  type Run,
  type RunPage,
  type RunStatus,
  type Step,
  type StepLog,
  type StepStatus,
} from './dto.js';
import type { ResetEvent, StreamEvent } from './events.js';

/**
 * Parsers of the runner API's JSON answers (`parseX(u: unknown): X`, in the style of
 * `protocol/validate.ts`): a client checks what it got before it trusts it, and an answer that
 * breaks the contract fails here with a `ProtocolError` naming the field, what was expected and
 * what came, instead of as an `undefined` somewhere in a dashboard.
 */

const STEP_STATUSES: readonly StepStatus[] = ['running', 'retrying', 'succeeded', 'failed', 'cancelled'];
const FAILURE_CALL_STATES: readonly FailureCallState[] = ['pending', 'delivered', 'failed'];

function oneOf<T extends string>(o: Fields, key: string, where: string, allowed: readonly T[]): T {
  const value = o[key];
  if (!(allowed as readonly unknown[]).includes(value)) {
    throw new ProtocolError(
      `Expected \`${key}\` in ${where} to be one of ${allowed.join(', ')}, got ${describe(value)}.`,
    );
  }
  return value as T;
}

/** `check(o, key, where)` when the field is not null; null when it is. */
function orNull<T>(
  o: Fields,
  key: string,
  where: string,
  check: (o: Fields, key: string, where: string) => T,
): T | null {
  return o[key] === null ? null : check(o, key, where);
}

function expectArray(o: Fields, key: string, where: string): unknown[] {
  const value = o[key];
  if (!Array.isArray(value))
    throw new ProtocolError(`Expected \`${key}\` in ${where} to be an array, got ${describe(value)}.`);
  return value;
}

const error = (o: Fields, key: string, where: string) => expectSerializedError(o[key], `\`${key}\` in ${where}`);
const record = (o: Fields, key: string, where: string) => expectStringRecord(o, key, where);

/** The value fields (`output`, `outputEncoded`); absent from slim events. */
function values(o: Fields, where: string, slim: boolean): { output?: unknown; outputEncoded?: string | null } {
  if (slim && o.outputEncoded === undefined) return {};
  const out: { output?: unknown; outputEncoded: string | null } = {
    outputEncoded: orNull(o, 'outputEncoded', where, expectString),
  };
  if ('output' in o) out.output = o.output;
  return out;
}

/** A run; `slim` allows the fields slim events leave out (see `OMITTED_WHEN_SLIM`). */
export function parseRun(u: unknown, where = 'the run', slim = false): Run {
  const o = expectObject(u, where);
  const run = {
    id: expectString(o, 'id', where),
    url: expectString(o, 'url', where),
    status: oneOf<RunStatus>(o, 'status', where, RUN_STATUSES),
    ...(slim && o.body === undefined
      ? {}
      : { body: expectString(o, 'body', where), headers: record(o, 'headers', where) }),
    createdAt: expectNumber(o, 'createdAt', where),
    updatedAt: expectNumber(o, 'updatedAt', where),
    finishedAt: orNull(o, 'finishedAt', where, expectNumber),
    nextAt: orNull(o, 'nextAt', where, expectNumber),
    failures: expectInteger(o, 'failures', where),
    retries: expectInteger(o, 'retries', where),
    retryDelayMs: expectNumber(o, 'retryDelayMs', where),
    stepsDone: expectInteger(o, 'stepsDone', where),
    attempts: expectInteger(o, 'attempts', where),
    ...values(o, where, slim),
    error: orNull(o, 'error', where, error),
    idempotencyKey: orNull(o, 'idempotencyKey', where, expectString),
    ...(o.scheduleId !== undefined && { scheduleId: expectString(o, 'scheduleId', where) }),
    unreachableSince: orNull(o, 'unreachableSince', where, expectNumber),
    failureCall: orNull(o, 'failureCall', where, (f, k, w) => oneOf<FailureCallState>(f, k, w, FAILURE_CALL_STATES)),
    failureCallAttempts: expectInteger(o, 'failureCallAttempts', where),
    // Absent only from older runners, which know no alerts.
    ...(o.alert !== undefined && {
      alert: orNull(o, 'alert', where, (f, k, w) => oneOf<AlertState>(f, k, w, ALERT_STATES)),
      alertAttempts: expectInteger(o, 'alertAttempts', where),
    }),
    ...(o.parentRunId !== undefined && {
      parentRunId: expectString(o, 'parentRunId', where),
      parentStepIndex: expectInteger(o, 'parentStepIndex', where),
    }),
    ...(o.protocol !== undefined && { protocol: oneOf<'upstash'>(o, 'protocol', where, ['upstash']) }),
  };
  // Only with flow control, so runs without it (and older runners) carry neither.
  for (const key of ['flowKey', 'queuedReason'] as const) {
    const text = optionalString(o, key, where);
    if (text !== undefined) (run as Partial<Run>)[key] = text;
  }
  return run as Run;
}

/** A step; `slim` allows the fields slim events leave out. */
export function parseStep(u: unknown, where = 'the step', slim = false): Step {
  const o = expectObject(u, where);
  const step = {
    runId: expectString(o, 'runId', where),
    index: expectInteger(o, 'index', where),
    name: expectString(o, 'name', where),
    kind: parseStepKind(o, 'kind', where),
    status: oneOf<StepStatus>(o, 'status', where, STEP_STATUSES),
    ...values(o, where, slim),
    error: orNull(o, 'error', where, error),
    startedAt: expectNumber(o, 'startedAt', where),
    finishedAt: orNull(o, 'finishedAt', where, expectNumber),
    durationMs: orNull(o, 'durationMs', where, expectNumber),
    reportedExecutions: expectInteger(o, 'reportedExecutions', where),
    failures: expectInteger(o, 'failures', where),
    group: orNull(o, 'group', where, expectInteger),
    until: orNull(o, 'until', where, expectNumber),
    eventId: orNull(o, 'eventId', where, expectString),
    ...(slim && o.request === undefined
      ? {}
      : {
          request:
            o.request === null
              ? null
              : (expectObject(o.request, `\`request\` in ${where}`) as unknown as Step['request']),
        }),
    ...(o.childRunId !== undefined && { childRunId: expectString(o, 'childRunId', where) }),
  };
  return step as Step;
}

/** An attempt; `slim` allows the headers and bodies slim events leave out. */
export function parseAttempt(u: unknown, where = 'the attempt', slim = false): Attempt {
  const o = expectObject(u, where);
  const bodies =
    slim && o.requestBody === undefined
      ? {}
      : {
          requestHeaders: record(o, 'requestHeaders', where),
          requestBody: expectString(o, 'requestBody', where),
          responseHeaders: orNull(o, 'responseHeaders', where, record),
          responseBody: orNull(o, 'responseBody', where, expectString),
        };
  return {
    runId: expectString(o, 'runId', where),
    seq: expectInteger(o, 'seq', where),
    startedAt: expectNumber(o, 'startedAt', where),
    durationMs: expectNumber(o, 'durationMs', where),
    requestUrl: expectString(o, 'requestUrl', where),
    ...bodies,
    responseStatus: orNull(o, 'responseStatus', where, expectInteger),
    outcome: expectString(o, 'outcome', where),
    error: orNull(o, 'error', where, error),
  } as Attempt;
}

/** `GET /v1/runs`. */
export function parseRunPage(u: unknown, where = 'the run list'): RunPage {
  const o = expectObject(u, where);
  return {
    runs: expectArray(o, 'runs', where).map((run, i) => parseRun(run, `\`runs[${i}]\` of ${where}`)),
    nextCursor: orNull(o, 'nextCursor', where, expectString),
  };
}

/** What one step execution printed (`StepLog`). */
export function parseStepLog(u: unknown, where = 'the step log'): StepLog {
  const o = expectObject(u, where);
  const { lines, dropped } = parseStepLogs(o, where);
  return {
    runId: expectString(o, 'runId', where),
    index: expectInteger(o, 'index', where),
    name: expectString(o, 'name', where),
    attempt: expectInteger(o, 'attempt', where),
    status: oneOf(o, 'status', where, ['succeeded', 'failed'] as const),
    at: expectNumber(o, 'at', where),
    lines,
    dropped: dropped ?? 0,
  };
}

/** `GET /v1/runs/:id`: a run with its steps, every attempt's log and what its steps printed. */
export interface RunDetail {
  run: Run;
  steps: Step[];
  attempts: Attempt[];
  /** By step, then attempt; empty from a runner without step logs. */
  logs: StepLog[];
}

export function parseRunDetail(u: unknown, where = 'the run detail'): RunDetail {
  const o = expectObject(u, where);
  return {
    run: parseRun(o.run, `\`run\` of ${where}`),
    steps: expectArray(o, 'steps', where).map((step, i) => parseStep(step, `\`steps[${i}]\` of ${where}`)),
    attempts: expectArray(o, 'attempts', where).map((attempt, i) =>
      parseAttempt(attempt, `\`attempts[${i}]\` of ${where}`),
    ),
    logs:
      o.logs === undefined
        ? []
        : expectArray(o, 'logs', where).map((log, i) => parseStepLog(log, `\`logs[${i}]\` of ${where}`)),
  };
}

/** `{ run }`: what cancel and rerun answer. */
export function parseRunAnswer(u: unknown, where: string): Run {
  return parseRun(expectObject(u, where).run, `\`run\` of ${where}`);
}

/** `POST /v1/runs`. */
export function parseTriggerAnswer(u: unknown, where = 'the trigger answer'): { workflowRunId: string } {
  return { workflowRunId: expectString(expectObject(u, where), 'workflowRunId', where) };
}

/** `POST /v1/events/:eventId`. */
export function parseNotifyAnswer(u: unknown, where = 'the notify answer'): { delivered: string[]; kept: boolean } {
  const o = expectObject(u, where);
  const delivered = expectArray(o, 'delivered', where).map((id, i) => {
    if (typeof id !== 'string')
      throw new ProtocolError(`Expected \`delivered[${i}]\` in ${where} to be a string, got ${describe(id)}.`);
    return id;
  });
  return { delivered, kept: expectBoolean(o, 'kept', where) };
}

/** `GET /v1/session`. */
export function parseSession(u: unknown, where = 'the session answer'): { needsToken: boolean } {
  return { needsToken: expectBoolean(expectObject(u, where), 'needsToken', where) };
}

/** One event of `GET /v1/events` (its `data:`), whole or slim, or a `reset`. */
export function parseStreamEvent(u: unknown, where = 'the event'): StreamEvent | ResetEvent {
  const o = expectObject(u, where);
  const type = oneOf(o, 'type', where, ['run', 'step', 'attempt', 'reset'] as const);
  if (type === 'reset') return { type };
  const slim = o.slim === true;
  const tail = slim ? { slim: true as const } : {};
  if (type === 'run') return { type, run: parseRun(o.run, `\`run\` of ${where}`, slim), ...tail } as StreamEvent;
  if (type === 'step') return { type, step: parseStep(o.step, `\`step\` of ${where}`, slim), ...tail } as StreamEvent;
  return { type, attempt: parseAttempt(o.attempt, `\`attempt\` of ${where}`, slim), ...tail } as StreamEvent;
}
