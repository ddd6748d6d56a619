import { ApiError } from '../../errors.js';
import type { Attempt, Run } from '../../store/types.js';
import { int, one, only } from './query.js';
import type { RunConfig } from '../context.js';
import { UpstashHeader } from '../headers.js';
import type { DeadLetter } from '../messages/store.js';

/**
 * QStash's DLQ for workflows (`client.dlq.list`, `delete`, `resume` and `restart` of
 * `@upstash/workflow`): the messages of runs that failed for good, kept in `qstash_messages` with
 * status `failed` until deleted here, revived (dlq-revive.ts) or pruned with their run (retention). The DLQ id is the message id. Listed newest
 * first; the cursor is the last message's `seq`.
 */

const bad = (message: string): ApiError => new ApiError(400, 'BAD_REQUEST', message);

/** What `dlq.list` filters on, as the runner honours them (others are refused by name). */
export interface DlqFilter {
  workflowRunId?: string;
  workflowUrl?: string;
  /** When the message failed, epoch ms, inclusive. */
  fromDate?: number;
  toDate?: number;
}

export interface DlqListQuery extends DlqFilter {
  count: number;
  cursor?: number;
}

/** The largest page of one call. */
export const MAX_DLQ_COUNT = 1_000;

function cursorOf(params: URLSearchParams): number | undefined {
  const text = one(params, 'cursor');
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text)) {
    throw bad(`Expected \`cursor\` to be one a previous answer gave, got "${text.slice(0, 40)}".`);
  }
  return Number(text);
}

function dlqFilter(params: URLSearchParams): DlqFilter {
  const filter: DlqFilter = {};
  const runId = one(params, 'workflowRunId');
  if (runId !== undefined) filter.workflowRunId = runId;
  const url = one(params, 'workflowUrl') ?? one(params, 'url');
  if (url !== undefined) filter.workflowUrl = url;
  const from = int(params, 'fromDate', 0, Number.MAX_SAFE_INTEGER);
  if (from !== undefined) filter.fromDate = from;
  const to = int(params, 'toDate', 0, Number.MAX_SAFE_INTEGER);
  if (to !== undefined) filter.toDate = to;
  return filter;
}

/** `GET /v2/dlq?source=workflow&…` (`dlq.list`). */
export function parseDlqListQuery(params: URLSearchParams): DlqListQuery {
  only(params, ['source', 'cursor', 'count', 'workflowRunId', 'workflowUrl', 'url', 'fromDate', 'toDate'], 'dlq.list');
  const source = one(params, 'source');
  if (source !== undefined && source !== 'workflow') {
    throw bad(`Expected \`source=workflow\` (this runner keeps workflow messages only), got "${source.slice(0, 40)}".`);
  }
  const query: DlqListQuery = { ...dlqFilter(params), count: int(params, 'count', 1, MAX_DLQ_COUNT) ?? 100 };
  const cursor = cursorOf(params);
  if (cursor !== undefined) query.cursor = cursor;
  return query;
}

/**
 * `DELETE /v2/workflows/dlq?…` (`dlq.delete`), `POST /v2/workflows/dlq/resume?…` and `…/restart?…`
 * (`dlq.resume`, `dlq.restart`): ids, or a filter, or all (`count` alone); at most `maxCount` a call.
 */
export type DlqActionQuery = { ids: string[] } | (DlqListQuery & { ids?: undefined });

export function parseDlqActionQuery(params: URLSearchParams, action: string, maxCount = MAX_DLQ_COUNT): DlqActionQuery {
  only(params, ['dlqIds', 'cursor', 'count', 'workflowRunId', 'workflowUrl', 'fromDate', 'toDate'], action);
  const ids = params.getAll('dlqIds').filter((id) => id !== '');
  if (ids.length > MAX_DLQ_COUNT) throw bad(`Expected at most ${MAX_DLQ_COUNT} dlqIds, got ${ids.length}.`);
  if (ids.length > 0) return { ids };
  // As for Client.cancel: an empty query acting on everything would be one typo away.
  if ([...params.keys()].length === 0) {
    throw bad(`${action}: expected dlqIds, a filter, or \`count\` for all messages; got no query, which acts on none.`);
  }
  // A larger count is served `maxCount` at a time, with a cursor (the SDK's default for all is 100).
  const count = Math.min(int(params, 'count', 1, MAX_DLQ_COUNT) ?? 100, maxCount);
  const query: DlqListQuery = { ...dlqFilter(params), count };
  const cursor = cursorOf(params);
  if (cursor !== undefined) query.cursor = cursor;
  return query;
}

/** True when the dead letter, of `run`, passes `filter`. */
export function matchesDlqFilter(letter: DeadLetter, run: Run | undefined, filter: DlqFilter): boolean {
  if (filter.workflowRunId !== undefined && letter.runId !== filter.workflowRunId) return false;
  if (filter.workflowUrl !== undefined && run?.url !== filter.workflowUrl) return false;
  if (filter.fromDate !== undefined && letter.failedAt < filter.fromDate) return false;
  if (filter.toDate !== undefined && letter.failedAt > filter.toDate) return false;
  return true;
}

const lists = (headers: Record<string, string> | null): Record<string, string[]> =>
  Object.fromEntries(Object.entries(headers ?? {}).map(([name, value]) => [name, [value]]));

const CALLBACK_STATES = {
  pending: 'CALLBACK_INPROGRESS',
  delivered: 'CALLBACK_SUCCESS',
  failed: 'CALLBACK_FAIL',
} as const;

/**
 * A dead letter as the SDK's `DLQMessage`: the message as stored (credential headers `[redacted]`),
 * its run, and the answer of its last delivery (from the run's attempt log).
 */
export function dlqMessage(
  letter: DeadLetter,
  run: Run | undefined,
  config: RunConfig | undefined,
  attempts: readonly Attempt[],
): Record<string, unknown> {
  const last = attempts.filter((attempt) => attempt.requestHeaders[UpstashHeader.MessageId] === letter.id).at(-1);
  const dto: Record<string, unknown> = {
    messageId: letter.id,
    dlqId: letter.id,
    url: letter.spec.destination,
    method: letter.spec.method,
    header: lists(letter.spec.headers),
    body: letter.spec.body,
    maxRetries: letter.spec.retries,
    notBefore: letter.dueAt,
    createdAt: letter.createdAt,
    workflowRunId: letter.runId,
    workflowCreatedAt: run?.createdAt,
    workflowUrl: run?.url,
    responseStatus: last?.responseStatus ?? undefined,
    responseHeader: last ? lists(last.responseHeaders) : undefined,
    responseBody: last?.responseBody ?? undefined,
  };
  const failureCallback = letter.spec.failureCallback?.url ?? config?.failureCallback?.url;
  if (failureCallback !== undefined) dto.failureCallback = failureCallback;
  if (run?.failureCall) dto.failureCallbackInfo = { state: CALLBACK_STATES[run.failureCall] };
  if (config?.label) {
    dto.label = config.label;
    dto.labels = [config.label];
  }
  return dto;
}
