import { ApiError } from '../../errors.js';
import type { WaitStep } from './waits.js';
import { WorkflowHeader } from '../headers.js';

/** The longest wait accepted, as QStash's paid plans: a year. */
export const MAX_WAIT_TIMEOUT_MS = 365 * 24 * 3_600_000;
/** Event ids are path segments and index keys: long enough for any real id, short enough to bound. */
export const MAX_EVENT_ID_LENGTH = 512;

/** What `POST /v2/wait/:eventId` carries, checked. */
export interface WaitRequest {
  url: string;
  timeout: string;
  timeoutMs: number;
  timeoutUrl?: string;
  timeoutBody?: string;
  timeoutHeaders?: Record<string, string[]>;
  step: WaitStep;
}

const bad = (message: string): ApiError => new ApiError(400, 'BAD_REQUEST', message);
const describe = (value: unknown): string =>
  value === null
    ? 'null'
    : Array.isArray(value)
      ? 'an array'
      : typeof value === 'string'
        ? `"${value.slice(0, 60)}"`
        : typeof value;
const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * The SDK's duration text (`30s`, `5m`, `2h`, `7d`; a bare number is seconds) in ms.
 * @example parseWaitTimeout('5m'); // 300000
 */
export function parseWaitTimeout(value: unknown): number {
  const match =
    typeof value === 'string'
      ? /^(\d{1,12})([smhd]?)$/.exec(value.trim())
      : typeof value === 'number' && Number.isInteger(value)
        ? [String(value), String(value), 's']
        : null;
  if (!match) throw bad(`Expected \`timeout\` to be a duration like 30s, 5m, 2h or 7d, got ${describe(value)}.`);
  const ms = Number(match[1]) * UNITS[match[2] || 's']!;
  if (ms < 1_000 || ms > MAX_WAIT_TIMEOUT_MS)
    throw bad(`Expected \`timeout\` between 1s and 365d, got ${describe(value)}.`);
  return ms;
}

/** An event id (or run id) from the path: non-empty, bounded, since it is stored (a kept event lives for days). */
export function checkEventId(eventId: string, what = 'an event id'): string {
  if (eventId === '') throw bad(`Expected ${what} in the path, got an empty one.`);
  if (eventId.length > MAX_EVENT_ID_LENGTH)
    throw bad(`Expected ${what} of at most ${MAX_EVENT_ID_LENGTH} characters, got ${eventId.length}.`);
  return eventId;
}

function headerLists(value: unknown, field: string): Record<string, string[]> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw bad(`Expected \`${field}\` to be an object of header lists, got ${describe(value)}.`);
  const out: Record<string, string[]> = {};
  for (const [name, list] of Object.entries(value)) {
    const values = typeof list === 'string' ? [list] : list;
    if (!Array.isArray(values) || !values.every((v) => typeof v === 'string'))
      throw bad(`Expected \`${field}.${name}\` to be a list of strings, got ${describe(list)}.`);
    out[name] = values as string[];
  }
  return out;
}

function nonNegativeInt(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    throw bad(`Expected \`${field}\` to be a non-negative integer, got ${describe(value)}.`);
  return value;
}

function parseStep(value: unknown): WaitStep {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw bad(`Expected \`step\` to be an object, got ${describe(value)}.`);
  const step = value as Record<string, unknown>;
  if (typeof step.stepName !== 'string')
    throw bad(`Expected \`step.stepName\` to be a string, got ${describe(step.stepName)}.`);
  if (typeof step.stepType !== 'string')
    throw bad(`Expected \`step.stepType\` to be a string, got ${describe(step.stepType)}.`);
  const parsed: WaitStep = {
    stepId: nonNegativeInt(step.stepId, 'step.stepId'),
    stepName: step.stepName,
    stepType: step.stepType,
    concurrent: step.concurrent === undefined ? 1 : nonNegativeInt(step.concurrent, 'step.concurrent'),
  };
  if (step.targetStep !== undefined && step.targetStep !== null)
    parsed.targetStep = nonNegativeInt(step.targetStep, 'step.targetStep');
  if (parsed.stepId === 0 && parsed.targetStep === undefined)
    throw bad('Expected `step.stepId` above 0, or `step.targetStep` for a wait inside Promise.all, got neither.');
  return parsed;
}

/**
 * The body of `POST /v2/wait/:eventId` (`context.waitForEvent`), with the field named in every
 * refusal. A timeout URL other than the workflow's own is refused rather than ignored: the runner
 * delivers a timeout to the run's workflow.
 */
export function parseWaitRequest(text: string): WaitRequest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad('Expected the wait request body to be JSON ({ url, timeout, step, … }).');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw bad(`Expected the wait request body to be an object, got ${describe(value)}.`);
  const body = value as Record<string, unknown>;
  if (typeof body.url !== 'string' || body.url === '')
    throw bad(`Expected \`url\` to be the workflow's URL, got ${describe(body.url)}.`);
  const timeoutMs = parseWaitTimeout(body.timeout ?? '7d');
  if (body.timeoutUrl !== undefined && body.timeoutUrl !== null && body.timeoutUrl !== body.url) {
    throw bad(
      `\`timeoutUrl\` other than the workflow's \`url\` is not supported by this runner (got ${describe(body.timeoutUrl)}): a timeout is delivered to the waiting workflow.`,
    );
  }
  if (body.timeoutBody !== undefined && body.timeoutBody !== null && typeof body.timeoutBody !== 'string')
    throw bad(`Expected \`timeoutBody\` to be a string, got ${describe(body.timeoutBody)}.`);
  return {
    url: body.url,
    timeout: typeof body.timeout === 'string' ? body.timeout : `${timeoutMs / 1000}s`,
    timeoutMs,
    ...(typeof body.timeoutUrl === 'string' && { timeoutUrl: body.timeoutUrl }),
    ...(typeof body.timeoutBody === 'string' && { timeoutBody: body.timeoutBody }),
    ...(body.timeoutHeaders !== undefined &&
      body.timeoutHeaders !== null && { timeoutHeaders: headerLists(body.timeoutHeaders, 'timeoutHeaders') }),
    step: parseStep(body.step),
  };
}

/** The run a wait belongs to: the `Upstash-Workflow-RunId` header, else the one in `timeoutHeaders` (the SDK writes it `Runid`). */
export function waitRunId(headers: Headers, request: WaitRequest): string {
  const fromHeader = headers.get(WorkflowHeader.RunId);
  const fromBody = Object.entries(request.timeoutHeaders ?? {}).find(
    ([name]) => name.toLowerCase() === WorkflowHeader.RunId,
  )?.[1][0];
  const runId = fromHeader || fromBody;
  if (!runId)
    throw bad(
      'Expected the wait request to name its run: an `Upstash-Workflow-RunId` header (or one in `timeoutHeaders`), got none.',
    );
  return runId;
}
