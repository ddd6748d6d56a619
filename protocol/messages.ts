import { ProtocolError } from './errors.js';
import { PROTOCOL_VERSION } from './headers.js';
import {
  expectInteger,
  expectObject,
  expectString,
  expectStringRecord,
  expectUrl,
  optionalInteger,
  optionalString,
  type Fields,
} from './validate.js';

/** Kinds of step. Issue-specific kinds (sleep, call, wait) share the same record. */
export type StepKind = 'run';

/** App -> runner `POST /v1/runs`: start a run of the workflow at `url`. */
export interface StartRequest {
  url: string;
  /** The raw request body the client sent to the route (JSON text, or empty). */
  body: string;
  headers: Record<string, string>;
  /** Retries of a failing step before the run fails. @default 3 */
  retries?: number;
  /** Base of the exponential backoff in ms. @default 1000 */
  retryDelayMs?: number;
  idempotencyKey?: string;
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
}

const STEP_KINDS: ReadonlySet<string> = new Set<StepKind>(['run']);

export function parseStepKind(o: Fields, key: string, where: string): StepKind {
  const kind = expectString(o, key, where);
  if (!STEP_KINDS.has(kind)) throw new ProtocolError(`Expected \`${key}\` in ${where} to be one of ${[...STEP_KINDS].join(', ')}, got "${kind}".`);
  return kind as StepKind;
}

export function parseStartRequest(value: unknown): StartRequest {
  const where = 'the start request';
  const o = expectObject(value, where);
  const out: StartRequest = {
    url: expectUrl(o, 'url', where),
    body: o.body === undefined ? '' : expectString(o, 'body', where),
    headers: o.headers === undefined ? {} : expectStringRecord(o, 'headers', where),
  };
  const retries = optionalInteger(o, 'retries', where);
  if (retries !== undefined) out.retries = retries;
  const retryDelayMs = optionalInteger(o, 'retryDelayMs', where);
  if (retryDelayMs !== undefined) out.retryDelayMs = retryDelayMs;
  const key = optionalString(o, 'idempotencyKey', where);
  if (key !== undefined) out.idempotencyKey = key;
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
    throw new ProtocolError(`Expected protocol version ${PROTOCOL_VERSION} in ${where}, got ${v}: update wfkit in the app or the runner.`);
  }
  return {
    v,
    runId: expectString(o, 'runId', where),
    body: expectString(o, 'body', where),
    headers: expectStringRecord(o, 'headers', where),
    steps: o.steps === null ? null : parseStepRecords(o.steps, '`steps` in ' + where),
    attempt: expectInteger(o, 'attempt', where, 1),
  };
}
