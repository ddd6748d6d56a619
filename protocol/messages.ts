import type { SerializedError } from './errors.js';
import { ProtocolError } from './errors.js';
import { parseFlowControl, type FlowControl } from './flow-control.js';
import { isStepKind, STEP_KINDS, type StepKind } from './step-kinds/index.js';
import { PROTOCOL_VERSION } from './headers.js';
import {
  expectBoolean,
  expectInteger,
  expectObject,
  expectSerializedError,
  expectString,
  expectStringRecord,
  expectUrl,
  optionalInteger,
  optionalString,
  type Fields,
} from './validate.js';

/**
 * Kinds of step. `run` executes in the route; `sleep`, `wait`, `call` and `invoke` suspend the
 * request and are resolved by the runner (a timer, an event, an HTTP call it makes, a child run).
 * Each kind's wire shape is its module in step-kinds/.
 */
export { STEP_KINDS, type StepKind } from './step-kinds/index.js';
export type { CallRequest } from './step-kinds/call.js';
export type { InvokeRequest } from './step-kinds/invoke.js';

/** App -> runner `POST /v1/runs`: start a run of the workflow at `url`. */
export interface StartRequest {
  url: string;
  /** The raw request body the client sent to the route (JSON text, or empty). */
  body: string;
  headers: Record<string, string>;
  /** Retries of a failing step before the step fails for good. @default 3 */
  retries?: number;
  /** Base of the exponential backoff in ms. @default 1000 */
  retryDelayMs?: number;
  /** Start the first drive this much later. @default 0 */
  delayMs?: number;
  idempotencyKey?: string;
  /** Limits shared by the runs of `flowControl.key` (see flow-control.ts). */
  flowControl?: FlowControl;
}

export interface StartResponse {
  workflowRunId: string;
}

/** A committed step as the runner hands it back for replay. */
export interface StepRecord {
  index: number;
  name: string;
  kind: StepKind;
  /** Encoded value (see values.ts); absent for `undefined`. */
  output?: string;
  /** Set when the step failed for good (retries spent): replay rethrows it into the workflow. */
  error?: SerializedError;
  /**
   * The position has no result yet (a step being retried, a sleep or wait the runner still owes)
   * while later positions have theirs: the route runs or suspends it again, and answers the later
   * ones from their records instead of executing them again (`Promise.all`, `Promise.race`).
   */
  pending?: boolean;
}

/** Runner -> route drive request body. */
export interface DriveRequest {
  v: number;
  runId: string;
  body: string;
  headers: Record<string, string>;
  /** Committed steps in order, or `null` when too large: fetch `GET /v1/runs/:id/steps` instead. */
  steps: StepRecord[] | null;
  /** 1 for the first attempt at the current position, counting up on retries. */
  attempt: number;
  /** Present when the run has failed: the route calls its `failureFunction` instead of the workflow. */
  failure?: { error: SerializedError; failedStep?: { index: number; name: string; kind: StepKind } };
}

export function parseStepKind(o: Fields, key: string, where: string): StepKind {
  const kind = expectString(o, key, where);
  if (!isStepKind(kind)) {
    throw new ProtocolError(`Expected \`${key}\` in ${where} to be one of ${STEP_KINDS.join(', ')}, got "${kind}".`);
  }
  return kind;
}

export function parseStartRequest(value: unknown): StartRequest {
  const where = 'the start request';
  const o = expectObject(value, where);
  const out: StartRequest = {
    url: expectUrl(o, 'url', where),
    body: o.body === undefined ? '' : expectString(o, 'body', where),
    headers: o.headers === undefined ? {} : expectStringRecord(o, 'headers', where),
  };
  for (const key of ['retries', 'retryDelayMs', 'delayMs'] as const) {
    const value = optionalInteger(o, key, where);
    if (value !== undefined) out[key] = value;
  }
  const key = optionalString(o, 'idempotencyKey', where);
  if (key !== undefined) out.idempotencyKey = key;
  if (o.flowControl !== undefined) out.flowControl = parseFlowControl(o.flowControl, `\`flowControl\` of ${where}`);
  return out;
}

export function parseStepRecord(value: unknown, where: string): StepRecord {
  const o = expectObject(value, where);
  const step: StepRecord = {
    index: expectInteger(o, 'index', where),
    name: expectString(o, 'name', where),
    kind: parseStepKind(o, 'kind', where),
  };
  const output = optionalString(o, 'output', where);
  if (output !== undefined) step.output = output;
  if (o.error !== undefined) step.error = expectSerializedError(o.error, `\`error\` in ${where}`);
  if (o.pending !== undefined) step.pending = expectBoolean(o, 'pending', where);
  return step;
}

export function parseStepRecords(value: unknown, where: string): StepRecord[] {
  if (!Array.isArray(value)) throw new ProtocolError(`Expected ${where} to be an array of steps.`);
  return value.map((s, i) => {
    const step = parseStepRecord(s, `${where}[${i}]`);
    if (step.index !== i) throw new ProtocolError(`Expected ${where}[${i}].index to be ${i}, got ${step.index}.`);
    return step;
  });
}

export function parseDriveRequest(value: unknown): DriveRequest {
  const where = 'the drive request';
  const o = expectObject(value, where);
  const v = expectInteger(o, 'v', where, 1);
  if (v !== PROTOCOL_VERSION) {
    throw new ProtocolError(
      `Expected protocol version ${PROTOCOL_VERSION} in ${where}, got ${v}: update wfkit in the app or the runner.`,
    );
  }
  const drive: DriveRequest = {
    v,
    runId: expectString(o, 'runId', where),
    body: expectString(o, 'body', where),
    headers: expectStringRecord(o, 'headers', where),
    steps: o.steps === null ? null : parseStepRecords(o.steps, '`steps` in ' + where),
    attempt: expectInteger(o, 'attempt', where, 1),
  };
  if (o.failure !== undefined) {
    const f = expectObject(o.failure, `\`failure\` in ${where}`);
    drive.failure = { error: expectSerializedError(f.error, `\`failure.error\` in ${where}`) };
    if (f.failedStep !== undefined) {
      const s = expectObject(f.failedStep, `\`failure.failedStep\` in ${where}`);
      drive.failure.failedStep = {
        index: expectInteger(s, 'index', where),
        name: expectString(s, 'name', where),
        kind: parseStepKind(s, 'kind', where),
      };
    }
  }
  return drive;
}
