import { ApiError } from '../../errors.js';
import { WORKFLOW_STATES, type WorkflowState } from './logs.js';

/**
 * The query strings of the Workflow `Client`'s list and bulk calls, checked: every parameter the
 * runner does not honour is refused by name, never ignored (an ignored filter of a cancel would
 * cancel more than asked).
 */

const bad = (message: string): ApiError => new ApiError(400, 'BAD_REQUEST', message);

export function only(params: URLSearchParams, allowed: readonly string[], where: string): void {
  for (const name of new Set(params.keys())) {
    if (!allowed.includes(name))
      throw bad(
        `${where}: the query parameter \`${name}\` is not supported by this runner (supported: ${allowed.join(', ')}).`,
      );
  }
}

export function one(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw bad(`Expected one \`${name}\`, got ${values.length}.`);
  return values[0] === '' ? undefined : values[0];
}

export function int(params: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const text = one(params, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    throw bad(`Expected \`${name}\` to be an integer from ${min} to ${max}, got "${text.slice(0, 40)}".`);
  return value;
}

/** Filters on runs shared by cancel and logs. `fromDate`/`toDate` are epoch ms (inclusive). */
export interface RunFilter {
  workflowUrl?: string;
  /** `workflowUrl` must equal the run's URL; otherwise it is a prefix. */
  exactUrl: boolean;
  fromDate?: number;
  toDate?: number;
  label?: string;
}

export interface CancelQuery extends RunFilter {
  workflowRunIds: string[];
  count: number;
  cursor?: string;
}

export interface LogsQuery extends RunFilter {
  workflowRunId?: string;
  state?: WorkflowState;
  workflowCreatedAt?: number;
  count: number;
  cursor?: string;
}

/** The largest `count` of one call, as QStash caps its pages. */
export const MAX_COUNT = 1_000;

function runFilter(params: URLSearchParams): RunFilter {
  const exact = one(params, 'workflowUrlExactMatch');
  if (exact !== undefined && exact !== 'true' && exact !== 'false')
    throw bad(`Expected \`workflowUrlExactMatch\` to be true or false, got "${exact.slice(0, 40)}".`);
  const filter: RunFilter = { exactUrl: exact === 'true' };
  const url = one(params, 'workflowUrl');
  if (url !== undefined) filter.workflowUrl = url;
  const from = int(params, 'fromDate', 0, Number.MAX_SAFE_INTEGER);
  if (from !== undefined) filter.fromDate = from;
  const to = int(params, 'toDate', 0, Number.MAX_SAFE_INTEGER);
  if (to !== undefined) filter.toDate = to;
  const label = one(params, 'label');
  if (label !== undefined) filter.label = label;
  return filter;
}

/** `DELETE /v2/workflows/runs?…` (`Client.cancel`): ids, or filters, or all (`count` alone). */
export function parseCancelQuery(params: URLSearchParams): CancelQuery {
  only(
    params,
    ['workflowRunIds', 'workflowUrl', 'workflowUrlExactMatch', 'fromDate', 'toDate', 'label', 'count', 'cursor'],
    'Client.cancel',
  );
  // An empty query cancelling everything would be one typo away: "all" says so with a count, as the SDK's `{ all: true }` does.
  if ([...params.keys()].length === 0)
    throw bad(
      'Client.cancel: expected run ids (`workflowRunIds`), a filter, or `count` for all runs; got no query, which cancels nothing.',
    );
  const workflowRunIds = params.getAll('workflowRunIds').filter((id) => id !== '');
  const query: CancelQuery = { ...runFilter(params), workflowRunIds, count: int(params, 'count', 1, MAX_COUNT) ?? 100 };
  const cursor = one(params, 'cursor');
  if (cursor !== undefined) query.cursor = cursor;
  return query;
}

/** `GET /v2/workflows/events?groupBy=workflowRunId&…` (`Client.logs`). */
export function parseLogsQuery(params: URLSearchParams): LogsQuery {
  only(
    params,
    [
      'groupBy',
      'workflowRunId',
      'state',
      'workflowUrl',
      'workflowUrlExactMatch',
      'workflowCreatedAt',
      'fromDate',
      'toDate',
      'label',
      'count',
      'cursor',
    ],
    'Client.logs',
  );
  const groupBy = one(params, 'groupBy');
  if (groupBy !== 'workflowRunId')
    throw bad(
      `Expected \`groupBy=workflowRunId\` (the runner lists workflow runs, not single events), got ${groupBy === undefined ? 'none' : `"${groupBy.slice(0, 40)}"`}.`,
    );
  // A workflowUrl in logs is an exact match (the SDK's documentation says so).
  const query: LogsQuery = { ...runFilter(params), exactUrl: true, count: int(params, 'count', 1, MAX_COUNT) ?? 10 };
  const state = one(params, 'state');
  if (state !== undefined) {
    if (!(WORKFLOW_STATES as readonly string[]).includes(state))
      throw bad(`Expected \`state\` to be one of ${WORKFLOW_STATES.join(', ')}, got "${state.slice(0, 40)}".`);
    query.state = state as WorkflowState;
  }
  const runId = one(params, 'workflowRunId');
  if (runId !== undefined) query.workflowRunId = runId;
  const createdAt = int(params, 'workflowCreatedAt', 0, Number.MAX_SAFE_INTEGER);
  if (createdAt !== undefined) query.workflowCreatedAt = createdAt;
  const cursor = one(params, 'cursor');
  if (cursor !== undefined) query.cursor = cursor;
  return query;
}

/**
 * A list's cursor: where the previous page stopped in start order (`<createdAt>:<runId>`, see
 * `MessageStore.runsByStart`); opaque to the client, as QStash's is.
 */
export function runCursor(run: { id: string; createdAt: number }): string {
  return `${run.createdAt}:${run.id}`;
}

export function parseRunCursor(cursor: string | undefined): { id: string; createdAt: number } | undefined {
  if (cursor === undefined) return undefined;
  const match = /^(\d{1,16}):(.+)$/.exec(cursor);
  if (!match) throw bad(`Expected \`cursor\` to be one a previous answer gave, got "${cursor.slice(0, 40)}".`);
  return { createdAt: Number(match[1]), id: match[2]! };
}
