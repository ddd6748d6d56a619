import { BULK_MAX_RUNS, type BulkFilter, type BulkRequest, type BulkResult } from '../../api/bulk.js';
import type { Runner } from '../runner.js';
import { toApiError } from './error-response.js';

/** Rows read per page while matching: the store's largest page. */
const PAGE = 500;

/**
 * The ids of the runs `filter` matches, newest first, at most `BULK_MAX_RUNS` (+1 to tell that more
 * matched). Paged through `listRuns` with the whole filter, so the store's indexes find the runs
 * (the same query as the run list's). Resume and rerun never apply to an Upstash-protocol run (its
 * app drives it through the QStash API: 409 `UPSTASH_RUN`), so they neither count nor refuse it.
 */
async function matchingRunIds(runner: Runner, filter: BulkFilter, action: BulkRequest['action']): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  const skipUpstash = action !== 'cancel';
  // Bounded: each turn reads one page and ends at the last page or at the cap.
  for (;;) {
    const page = await runner.store.listRuns({ ...filter, cursor, limit: PAGE });
    for (const run of page.runs) if (!(skipUpstash && run.protocol === 'upstash')) ids.push(run.id);
    if (ids.length > BULK_MAX_RUNS || page.nextCursor === null) return ids;
    cursor = page.nextCursor;
  }
}

/**
 * Runs one action on every run a filter matches, one run at a time (each its own transaction, as
 * when called one by one). A run the action refuses is reported in `failed`, and the rest go on.
 */
export async function bulkAction(runner: Runner, request: BulkRequest): Promise<BulkResult> {
  const found = await matchingRunIds(runner, request.filter, request.action);
  const truncated = found.length > BULK_MAX_RUNS;
  const ids = found.slice(0, BULK_MAX_RUNS);
  const result: BulkResult = { matched: ids.length, done: 0, failed: [], truncated };
  if (request.dryRun) return result;
  const act = {
    resume: (id: string) => runner.resumeRun(id),
    cancel: (id: string) => runner.cancelRun(id),
    rerun: (id: string) => runner.rerun(id),
  }[request.action];
  for (const runId of ids) {
    try {
      await act(runId);
      result.done += 1;
    } catch (error) {
      // The same code and message the single-run route would answer (a 500's details stay in the log).
      const apiError = toApiError(error, runner.logger);
      result.failed.push({ runId, code: apiError.code, message: apiError.message });
    }
  }
  return result;
}
