import type { Context } from 'hono';
import { failureResponse } from '../../api/error-response.js';
import { jsonResponse } from '../../api/http-io.js';
import type { Run } from '../../store/types.js';
import type { RunConfig } from '../context.js';
import { dlqMessage, matchesDlqFilter, parseDlqActionQuery, parseDlqListQuery, type DlqFilter } from './dlq.js';
import { notRevivable, reviveRun, type ReviveMode, type RevivedRun } from './dlq-revive.js';
import { ApiError } from '../../errors.js';
import { parsed, requestHeaders } from '../routes/route-input.js';
import type { QStashEngine } from '../engine.js';
import type { DeadLetter } from '../messages/store.js';
import type { QStashRouteSet } from '../routes/route-set.js';

/** Rows read per page while matching, and at most this many per call: list and delete stay bounded. */
const PAGE = 500;
const SCAN_CAP = 10_000;

/**
 * Newest first from `cursor` (a `seq`), the dead letters `filter` accepts, until `count` are
 * found; `cursor` in the answer is where the next call goes on (absent when nothing is left).
 */
async function scanDeadLetters(
  engine: QStashEngine,
  query: DlqFilter & { count: number; cursor?: number },
  runOf: (runId: string) => Promise<Run | undefined>,
): Promise<{ letters: DeadLetter[]; cursor?: string }> {
  const letters: DeadLetter[] = [];
  let read = 0;
  let beforeSeq = query.cursor;
  for (;;) {
    const page = await engine.context.messages.deadLetters({
      ...(beforeSeq !== undefined && { beforeSeq }),
      ...(query.workflowRunId !== undefined && { runId: query.workflowRunId }),
      limit: PAGE,
    });
    for (const letter of page) {
      read++;
      if (matchesDlqFilter(letter, await runOf(letter.runId!), query)) letters.push(letter);
      if (letters.length === query.count || read === SCAN_CAP) {
        const more = letter !== page[page.length - 1] || page.length === PAGE;
        return more ? { letters, cursor: String(letter.seq) } : { letters };
      }
    }
    if (page.length < PAGE) return { letters };
    beforeSeq = page[page.length - 1]!.seq;
  }
}

/** QStash resumes or restarts at most this many runs a call, with a cursor for the rest. */
const MAX_REVIVED = 50;

/** The overrides of a resume or restart: `Upstash-Retries`, `Upstash-Flow-Control-Key/-Value`, read as a publish reads them. */
function reviveOverrides(headers: Record<string, string>, action: string) {
  // No destination: the request's headers alone are read (any other Upstash-* header is refused, by name).
  const spec = parsed('http://dlq.invalid/', headers, '', action);
  return { retries: spec.retries, flowControl: spec.flowControl, runId: spec.workflow?.runId };
}

/**
 * `GET /v2/dlq` (`client.dlq.list`), `DELETE /v2/workflows/dlq` (`client.dlq.delete`) and
 * `POST /v2/workflows/dlq/resume|restart` (`client.dlq.resume`, `client.dlq.restart`; also with one
 * id in the path, as QStash's REST API has it), on the `/v2` app behind its token check (dlq.ts says
 * what a dead letter is, dlq-revive.ts what a revived run is). Retrying the failure function is not
 * served (the catch-all 404 names it).
 */
export const dlqRoutes: QStashRouteSet = (app, { engine, logger }) => {
  const { store, messages } = engine.context;
  /** Runs read once per call. */
  const runReader = (): ((runId: string) => Promise<Run | undefined>) => {
    const runs = new Map<string, Promise<Run | undefined>>();
    return (runId) => {
      let run = runs.get(runId);
      if (!run) runs.set(runId, (run = store.getRun(runId)));
      return run;
    };
  };

  app.get('/dlq', async (c) => {
    try {
      const query = parseDlqListQuery(new URL(c.req.url).searchParams);
      const runOf = runReader();
      const found = await scanDeadLetters(engine, query, runOf);
      const dtos = await Promise.all(
        found.letters.map(async (letter) => {
          const runId = letter.runId!;
          const text = await messages.runConfig(runId);
          const config = text === undefined ? undefined : (JSON.parse(text) as RunConfig);
          return dlqMessage(letter, await runOf(runId), config, await store.listAttempts(runId));
        }),
      );
      const page = found.cursor === undefined ? { messages: dtos } : { messages: dtos, cursor: found.cursor };
      return jsonResponse(200, page);
    } catch (error) {
      return failureResponse(error, logger);
    }
  });

  app.delete('/workflows/dlq', async (c) => {
    try {
      const query = parseDlqActionQuery(new URL(c.req.url).searchParams, 'dlq.delete');
      if (query.ids !== undefined) return jsonResponse(200, { deleted: await messages.deleteDeadLetters(query.ids) });
      const found = await scanDeadLetters(engine, query, runReader());
      const deleted = await messages.deleteDeadLetters(found.letters.map((letter) => letter.id));
      return jsonResponse(200, found.cursor === undefined ? { deleted } : { deleted, cursor: found.cursor });
    } catch (error) {
      return failureResponse(error, logger);
    }
  });

  /** Ids given: every one must be a dead letter of a failed run (404, 409 naming it), checked before any revives. */
  const lettersById = async (ids: readonly string[]): Promise<DeadLetter[]> => {
    const letters = await messages.deadLetters({ ids, limit: ids.length });
    const missing = ids.filter((id) => !letters.some((letter) => letter.id === id));
    if (missing.length > 0)
      throw new ApiError(
        404,
        'NOT_FOUND',
        `No DLQ message ${missing.slice(0, 5).join(', ')} (deleted, revived, or never one).`,
      );
    for (const letter of letters) {
      const run = await store.getRun(letter.runId!);
      if (run?.status !== 'failed') throw notRevivable(letter, run);
    }
    // In the order given, as the SDK reads its answer back.
    return ids.map((id) => letters.find((letter) => letter.id === id)!);
  };

  const revive = (mode: ReviveMode) => {
    const action = `dlq.${mode}`;
    return async (c: Context): Promise<Response> => {
      try {
        const overrides = reviveOverrides(requestHeaders(c), action);
        const single = c.req.param('dlqId');
        if (single !== undefined) {
          const [letter] = await lettersById([single]);
          return jsonResponse(200, await reviveRun(engine, letter!, mode, overrides));
        }
        const query = parseDlqActionQuery(new URL(c.req.url).searchParams, action, MAX_REVIVED);
        if (overrides.runId !== undefined && (query.ids?.length ?? 0) !== 1)
          throw new ApiError(400, 'BAD_REQUEST', `${action}: Upstash-Workflow-RunId names the run of one DLQ id only.`);
        let letters: DeadLetter[];
        let cursor: string | undefined;
        if (query.ids !== undefined) letters = await lettersById(query.ids);
        else {
          const runOf = runReader();
          const found = await scanDeadLetters(engine, query, runOf);
          // A call's letter while its run goes on is not a failed run's: left where it is.
          letters = [];
          for (const letter of found.letters)
            if ((await runOf(letter.runId!))?.status === 'failed') letters.push(letter);
          cursor = found.cursor;
        }
        const workflowRuns: RevivedRun[] = [];
        const revived = new Set<string>();
        for (const letter of letters) {
          // A run is revived once per call, whichever of its letters named it.
          if (revived.has(letter.runId!)) continue;
          revived.add(letter.runId!);
          workflowRuns.push(await reviveRun(engine, letter, mode, overrides));
        }
        return jsonResponse(200, cursor === undefined ? { workflowRuns } : { workflowRuns, cursor });
      } catch (error) {
        return failureResponse(error, logger);
      }
    };
  };
  app.post('/workflows/dlq/resume', revive('resume'));
  app.post('/workflows/dlq/resume/:dlqId', revive('resume'));
  app.post('/workflows/dlq/restart', revive('restart'));
  app.post('/workflows/dlq/restart/:dlqId', revive('restart'));
};
