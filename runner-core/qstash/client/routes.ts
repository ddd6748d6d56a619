import type { Hono } from 'hono';
import { failureResponse } from '../../api/error-response.js';
import { jsonResponse } from '../../api/http-io.js';
import { ApiError, RunFinishedError, RunNotFoundError } from '../../errors.js';
import type { Logger } from '../../telemetry/logger.js';
import { childRunIdOf } from '../../../api/links.js';
import { FINISHED_RUN_STATUSES, type Run, type Step, type Store } from '../../store/types.js';
import { workflowRunLog, workflowState, type RunLogExtras } from './logs.js';
import { parseCancelQuery, parseLogsQuery, parseRunCursor, runCursor, type RunFilter } from './query.js';
import type { RunConfig } from '../context.js';
import type { QStashEngine } from '../engine.js';
import type { RunMessage } from '../messages/store.js';
import { readSdkStep } from '../sdk-steps.js';
import type { QStashRouteSet } from '../routes/route-set.js';

/** One page of the runs the QStash API started, newest start first, from `cursor` (see query.ts `runCursor`). */
export type RunPager = (
  cursor: string | undefined,
  limit: number,
) => Promise<{ runs: Run[]; nextCursor: string | null }>;

export interface ClientRouteDeps {
  store: Pick<Store, 'getRun' | 'listSteps'>;
  /** Where list and bulk calls read runs from, in QStash's order. */
  runPage: RunPager;
  /** The runner's cancel (`RunnerActions.cancelRun`): the same as `wf cancel` and the dashboards'. */
  cancelRun(runId: string): Promise<unknown>;
  /** A run's label and retry delay (and for a log, its message ids), from the engine; without it a `label` filter is refused. */
  runExtras?(runId: string, purpose: 'filter' | 'log'): Promise<RunLogExtras | undefined>;
  logger: Logger;
}

/** Rows read per page while matching, and at most this many per call: list and bulk calls stay bounded. */
const PAGE = 500;
const SCAN_CAP = 10_000;

/** A run started through the QStash API (the engine marks it); native runs are not the Workflow Client's. */
export function isUpstashRun(run: Run): boolean {
  return run.protocol === 'upstash';
}

async function matchesFilter(
  run: Run,
  filter: RunFilter,
  extras: () => Promise<RunLogExtras | undefined>,
): Promise<boolean> {
  if (!isUpstashRun(run)) return false;
  if (
    filter.workflowUrl !== undefined &&
    (filter.exactUrl ? run.url !== filter.workflowUrl : !run.url.startsWith(filter.workflowUrl))
  )
    return false;
  if (filter.fromDate !== undefined && run.createdAt < filter.fromDate) return false;
  if (filter.toDate !== undefined && run.createdAt > filter.toDate) return false;
  if (filter.label !== undefined && (await extras())?.label !== filter.label) return false;
  return true;
}

/**
 * Newest start first from `cursor`, the runs `keep` accepts, until `count` are found: `cursor` in the
 * answer is where the next call goes on (absent when nothing is left). At most `SCAN_CAP` rows are
 * read per call; past that the cursor says where to go on, so no call is unbounded.
 */
async function scan(
  runPage: RunPager,
  cursor: string | undefined,
  count: number,
  keep: (run: Run) => Promise<boolean>,
): Promise<{ runs: Run[]; cursor?: string }> {
  const runs: Run[] = [];
  let read = 0;
  let next = cursor;
  for (;;) {
    const page = await runPage(next, PAGE);
    for (const run of page.runs) {
      read++;
      if (await keep(run)) runs.push(run);
      if (runs.length === count || read === SCAN_CAP) {
        const more = run !== page.runs[page.runs.length - 1] || page.nextCursor !== null;
        return more ? { runs, cursor: runCursor(run) } : { runs };
      }
    }
    if (page.nextCursor === null) return { runs };
    next = page.nextCursor;
  }
}

/**
 * What the Workflow `Client` calls besides publish: `DELETE /v2/workflows/runs` (`Client.cancel`:
 * ids, a URL prefix or exact URL with date and label filters, or all) and `GET /v2/workflows/events`
 * (`Client.logs`). Mounted on the engine's `/v2` app (paths relative to it), behind its token check.
 */
export function mountClientRoutes(app: Hono, deps: ClientRouteDeps): void {
  const extrasOf = (runId: string) => () => deps.runExtras?.(runId, 'filter') ?? Promise.resolve(undefined);
  const refuseLabelWithoutExtras = (filter: RunFilter): void => {
    if (filter.label !== undefined && !deps.runExtras)
      throw new ApiError(400, 'BAD_REQUEST', 'The `label` filter is not supported by this runner yet.');
  };

  /** Cancels one run; false when it is not an Upstash run, or finished, or gone meanwhile. */
  const cancelOne = async (run: Run | undefined): Promise<boolean> => {
    if (!run || !isUpstashRun(run) || FINISHED_RUN_STATUSES.has(run.status)) return false;
    try {
      await deps.cancelRun(run.id);
      return true;
    } catch (error) {
      if (error instanceof RunFinishedError || error instanceof RunNotFoundError) return false;
      throw error;
    }
  };

  app.delete('/workflows/runs', async (c) => {
    try {
      const query = parseCancelQuery(new URL(c.req.url).searchParams);
      refuseLabelWithoutExtras(query);
      if (query.workflowRunIds.length > 0) {
        if (query.workflowRunIds.length > SCAN_CAP)
          throw new ApiError(
            400,
            'BAD_REQUEST',
            `Expected at most ${SCAN_CAP} workflowRunIds, got ${query.workflowRunIds.length}.`,
          );
        let cancelled = 0;
        for (const id of new Set(query.workflowRunIds)) if (await cancelOne(await deps.store.getRun(id))) cancelled++;
        return jsonResponse(200, { cancelled });
      }
      const open = async (run: Run): Promise<boolean> =>
        !FINISHED_RUN_STATUSES.has(run.status) && (await matchesFilter(run, query, extrasOf(run.id)));
      const found = await scan(deps.runPage, query.cursor, query.count, open);
      let cancelled = 0;
      for (const run of found.runs) if (await cancelOne(run)) cancelled++;
      return jsonResponse(200, found.cursor === undefined ? { cancelled } : { cancelled, cursor: found.cursor });
    } catch (error) {
      return failureResponse(error, deps.logger);
    }
  });

  app.get('/workflows/events', async (c) => {
    try {
      const query = parseLogsQuery(new URL(c.req.url).searchParams);
      refuseLabelWithoutExtras(query);
      const keep = async (run: Run): Promise<boolean> =>
        (await matchesFilter(run, query, extrasOf(run.id))) &&
        (query.state === undefined || workflowState(run) === query.state) &&
        (query.workflowCreatedAt === undefined || run.createdAt === query.workflowCreatedAt);
      let found: { runs: Run[]; cursor?: string };
      if (query.workflowRunId !== undefined) {
        const run = await deps.store.getRun(query.workflowRunId);
        found = { runs: run && (await keep(run)) ? [run] : [] };
      } else {
        found = await scan(deps.runPage, query.cursor, query.count, keep);
      }
      const runs = await Promise.all(
        found.runs.map(async (run) => {
          const steps = await deps.store.listSteps(run.id);
          const extras = (await deps.runExtras?.(run.id, 'log')) ?? {};
          return workflowRunLog(run, steps, { ...extras, children: await unansweredChildren(deps.store, steps) });
        }),
      );
      return jsonResponse(200, found.cursor === undefined ? { runs } : { cursor: found.cursor, runs });
    } catch (error) {
      return failureResponse(error, deps.logger);
    }
  });
}

/** The child runs of invoke steps that never got their result (their invoker ended first), by position. */
async function unansweredChildren(store: ClientRouteDeps['store'], steps: readonly Step[]): Promise<Map<number, Run>> {
  const children = new Map<number, Run>();
  for (const step of steps) {
    const childId = step.status === 'succeeded' ? undefined : childRunIdOf(step);
    const child = childId === undefined ? undefined : await store.getRun(childId);
    if (child) children.set(step.index, child);
  }
  return children;
}

/**
 * The run's label and retry delay from its config (`qstash_runs.config`, see context.ts's `RunConfig`);
 * for a `'log'` also the ids and types of the messages that carried its steps.
 */
async function runExtrasOf(
  engine: QStashEngine,
  runId: string,
  purpose: 'filter' | 'log',
): Promise<RunLogExtras | undefined> {
  const text = await engine.context.messages.runConfig(runId);
  if (text === undefined) return undefined;
  const config = JSON.parse(text) as Partial<RunConfig>;
  const extras: RunLogExtras = { label: config.label ?? null, retryDelay: config.retryDelay ?? null };
  if (purpose === 'log') Object.assign(extras, positionsOf(await engine.context.messages.runMessages(runId)));
  return extras;
}

/**
 * Position → the message that carried it and the SDK's step type in it: the first message is the
 * payload (0), a step message carries its `stepId`.
 */
function positionsOf(messages: readonly RunMessage[]): Pick<RunLogExtras, 'messageIds' | 'stepTypes'> {
  const messageIds = new Map<number, string>();
  const stepTypes = new Map<number, string>();
  for (const [i, message] of messages.entries()) {
    if (i === 0) {
      messageIds.set(0, message.id);
      continue;
    }
    if (message.callType !== null && message.callType !== 'step') continue;
    const step = readSdkStep(message.body);
    if (!step || step.stepId <= 0) continue;
    messageIds.set(step.stepId, message.id);
    stepTypes.set(step.stepId, step.stepType);
  }
  return { messageIds, stepTypes };
}

/** The engine's runs in start order (`MessageStore.runsByStart`), each read whole; one gone meanwhile is skipped. */
function startOrderPager(engine: QStashEngine): RunPager {
  return async (cursor, limit) => {
    const starts = await engine.context.messages.runsByStart(parseRunCursor(cursor), limit);
    const runs = await Promise.all(starts.map((start) => engine.context.store.getRun(start.id)));
    const last = starts[starts.length - 1];
    const nextCursor = starts.length === limit && last ? runCursor(last) : null;
    return { runs: runs.filter((run) => run !== undefined), nextCursor };
  };
}

/** The route set `QSTASH_ROUTE_SETS` mounts (routes.ts): a cancel is the engine's, as the SDK's own `context.cancel()`. */
export const clientRoutes: QStashRouteSet = (app, { engine, logger }) =>
  mountClientRoutes(app, {
    store: engine.context.store,
    runPage: startOrderPager(engine),
    cancelRun: (runId) => engine.finishRun(runId, { status: 'cancelled' }),
    runExtras: (runId, purpose) => runExtrasOf(engine, runId, purpose),
    logger,
  });
