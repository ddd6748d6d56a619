import { failureResponse } from '../../api/error-response.js';
import { jsonResponse } from '../../api/http-io.js';
import type { Run } from '../../store/types.js';
import type { RunConfig } from '../context.js';
import { dlqMessage, matchesDlqFilter, parseDlqDeleteQuery, parseDlqListQuery, type DlqFilter } from './dlq.js';
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

/**
 * `GET /v2/dlq` (`client.dlq.list`) and `DELETE /v2/workflows/dlq` (`client.dlq.delete`), on the
 * `/v2` app behind its token check (dlq.ts says what a dead letter is). Resume, restart and retrying
 * the failure function are not served (the catch-all 404 names them).
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
      const query = parseDlqDeleteQuery(new URL(c.req.url).searchParams);
      if (query.ids !== undefined) return jsonResponse(200, { deleted: await messages.deleteDeadLetters(query.ids) });
      const found = await scanDeadLetters(engine, query, runReader());
      const deleted = await messages.deleteDeadLetters(found.letters.map((letter) => letter.id));
      return jsonResponse(200, found.cursor === undefined ? { deleted } : { deleted, cursor: found.cursor });
    } catch (error) {
      return failureResponse(error, logger);
    }
  });
};
