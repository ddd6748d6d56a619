import type { AttemptOutcome } from '../../api/attempt-outcome.js';
import type { SerializedError } from '../../protocol/errors.js';
import type { FlowControl } from '../../protocol/flow-control.js';
import type { CallRequest, StepKind } from '../../protocol/messages.js';
import type { AlertState, Attempt, FailureCallState, Run, RunPage, RunStatus, Step, StepStatus } from './types.js';

/**
 * Rows of the store tables and their mapping to records, shared by both dialects: the only place
 * that knows column names (PostgreSQL uses the same names and types, BIGINT parsed as numbers),
 * and the paging rules both stores follow.
 */

/** Runs per page of `listRuns` when the query names no limit, and the most it may ask for. */
export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 500;

/** A query's `limit` as a page size: 1 to MAX_PAGE_LIMIT, DEFAULT_PAGE_LIMIT when missing. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return DEFAULT_PAGE_LIMIT;
  return Math.min(MAX_PAGE_LIMIT, Math.max(1, Math.trunc(limit)));
}

/** A page from `limit + 1` rows, newest first: the extra row says whether another page exists, without a COUNT. */
export function toRunPage(rows: readonly RunRow[], limit: number): RunPage {
  const runs = rows.slice(0, limit).map(toRun);
  return { runs, nextCursor: rows.length > limit ? (runs.at(-1)?.id ?? null) : null };
}

export interface RunRow {
  id: string;
  url: string;
  status: string;
  body: string;
  headers: string;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
  next_at: number | null;
  failures: number;
  retries: number;
  retry_delay_ms: number;
  steps_done: number;
  attempts: number;
  output: string | null;
  error: string | null;
  idempotency_key: string | null;
  unreachable_since: number | null;
  failure_call: string | null;
  failure_call_attempts: number;
  alert: string | null;
  alert_attempts: number;
  /** Absent before the delivery-schedules migration. */
  failure_call_next_at?: number | null;
  alert_next_at?: number | null;
  flow_key: string | null;
  flow_wait_reason: string | null;
  flow_parallelism: number | null;
  flow_rate: number | null;
  flow_period_ms: number | null;
  /** 'upstash' for a run started through the QStash API (runner-core/qstash/); absent before that migration. */
  protocol?: string | null;
}
export interface StepRow {
  run_id: string;
  idx: number;
  name: string;
  kind: string;
  status: string;
  output: string | null;
  error: string | null;
  started_at: number;
  finished_at: number | null;
  duration_ms: number | null;
  reported_executions: number;
  failures: number;
  group_id: number | null;
  until: number | null;
  event_id: string | null;
  request: string | null;
}
export interface AttemptRow {
  run_id: string;
  seq: number;
  started_at: number;
  duration_ms: number;
  request_url: string;
  request_headers: string;
  request_body: string;
  response_status: number | null;
  response_headers: string | null;
  response_body: string | null;
  /** The text `attemptOutcome` wrote (api/attempt-outcome.ts), the same format since the first rows. */
  outcome: AttemptOutcome;
  error: string | null;
}

export function fromJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}
export function toJson(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** Lease columns are deliberately left out: they are the store's business, not the runner's. */
export function toRun(row: RunRow): Run {
  return {
    id: row.id,
    url: row.url,
    status: row.status as RunStatus,
    body: row.body,
    headers: fromJson<Record<string, string>>(row.headers) ?? {},
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
    nextAt: row.next_at,
    failures: row.failures,
    retries: row.retries,
    retryDelayMs: row.retry_delay_ms,
    stepsDone: row.steps_done,
    attempts: row.attempts,
    output: row.output,
    error: fromJson<SerializedError>(row.error),
    idempotencyKey: row.idempotency_key,
    unreachableSince: row.unreachable_since,
    failureCall: row.failure_call as FailureCallState | null,
    failureCallAttempts: row.failure_call_attempts,
    alert: row.alert as AlertState | null,
    alertAttempts: row.alert_attempts,
    // A failed run's delivery schedules (run-end/): only while set, so other runs keep their shape.
    ...(row.failure_call_next_at != null && { failureCallNextAt: Number(row.failure_call_next_at) }),
    ...(row.alert_next_at != null && { alertNextAt: Number(row.alert_next_at) }),
    // Only with flow control: runs without it keep their shape. Only an unfinished run waits; the
    // reason is its last refused claim's, until a claim succeeds.
    ...(row.flow_key === null ? {} : { flowKey: row.flow_key, flowControl: toFlowControl(row.flow_key, row) }),
    ...(row.finished_at === null && row.flow_wait_reason !== null ? { queuedReason: row.flow_wait_reason } : {}),
    ...(row.protocol === 'upstash' ? { protocol: 'upstash' as const } : {}),
  };
}
/** The run's flow control as it was started with (a rerun starts under the same key and limits). */
function toFlowControl(key: string, row: RunRow): FlowControl {
  const flow: FlowControl = { key };
  if (row.flow_parallelism !== null) flow.parallelism = Number(row.flow_parallelism);
  if (row.flow_rate !== null) flow.rate = Number(row.flow_rate);
  if (row.flow_period_ms !== null) flow.periodMs = Number(row.flow_period_ms);
  return flow;
}

export function toStep(row: StepRow): Step {
  return {
    runId: row.run_id,
    index: row.idx,
    name: row.name,
    kind: row.kind as StepKind,
    status: row.status as StepStatus,
    output: row.output,
    error: fromJson<SerializedError>(row.error),
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    durationMs: row.duration_ms,
    reportedExecutions: row.reported_executions,
    failures: row.failures,
    group: row.group_id,
    until: row.until,
    eventId: row.event_id,
    request: fromJson<CallRequest>(row.request),
  };
}
export function toAttempt(row: AttemptRow): Attempt {
  return {
    runId: row.run_id,
    seq: row.seq,
    startedAt: row.started_at,
    durationMs: row.duration_ms,
    requestUrl: row.request_url,
    requestHeaders: fromJson<Record<string, string>>(row.request_headers) ?? {},
    requestBody: row.request_body,
    responseStatus: row.response_status,
    responseHeaders: fromJson<Record<string, string>>(row.response_headers),
    responseBody: row.response_body,
    outcome: row.outcome,
    error: fromJson<SerializedError>(row.error),
  };
}
export function attemptParams(a: Attempt): Record<string, unknown> {
  return {
    runId: a.runId,
    seq: a.seq,
    startedAt: a.startedAt,
    durationMs: a.durationMs,
    requestUrl: a.requestUrl,
    requestHeaders: JSON.stringify(a.requestHeaders),
    requestBody: a.requestBody,
    responseStatus: a.responseStatus,
    responseHeaders: toJson(a.responseHeaders),
    responseBody: a.responseBody,
    outcome: a.outcome,
    error: toJson(a.error),
  };
}
