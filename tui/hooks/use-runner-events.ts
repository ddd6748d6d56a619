import { useEffect, useRef, useState, type Dispatch } from 'react';
import { coalesce } from '../../api/coalesce.js';
import { eventRunId, isSlim, type StreamEvent } from '../../api/events.js';
import { errorMessage, type DataSource } from '../data-source.js';
import type { Action } from '../state.js';

export interface RunnerEventsOptions {
  /** Runs per history request (the API allows up to 500). @default 500 */
  pageSize?: number;
  /** History loaded at most (newest first); live runs come on top. @default 10000 */
  maxRuns?: number;
  /** Events arriving within this window reach the reducer as one batch. @default 16 */
  batchMs?: number;
}

/**
 * Feeds the reducer from a data source: live events (batched, so a burst is one render), the run
 * history once the stream is open (and again after a reconnect, to catch what was missed), and
 * the open run's steps and attempts: read when it opens, after a reconnect, and again (one read
 * per burst) when slim events say it changed, since they leave its bodies out.
 */
export function useRunnerEvents(
  source: DataSource,
  dispatch: Dispatch<Action>,
  openRunId: string | null,
  options: RunnerEventsOptions = {},
): void {
  const { pageSize = 500, maxRuns = 10_000, batchMs = 16 } = options;
  // Bumped each time the stream (re)opens, so the open run is read again after a gap.
  const [generation, setGeneration] = useState(0);
  const openRun = useRef(openRunId);
  openRun.current = openRunId;

  useEffect(() => {
    let queue: StreamEvent[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    let loads = 0;
    let stopped = false;
    const refresh = coalesce(async () => {
      const id = openRun.current;
      if (id === null || stopped) return;
      // A failed read leaves the detail as it is: the next event or reconnect reads again.
      const detail = await source.getRun(id);
      if (!stopped && openRun.current === id) dispatch({ type: 'detail-loaded', ...detail });
    });
    const flush = (): void => {
      timer = undefined;
      const events = queue;
      queue = [];
      if (events.length > 0) dispatch({ type: 'events', events });
      if (events.some((event) => isSlim(event) && eventRunId(event) === openRun.current)) refresh();
    };
    const loadHistory = async (load: number): Promise<void> => {
      let cursor: string | undefined;
      let loaded = 0;
      do {
        const page = await source.listRuns({ cursor, limit: Math.min(pageSize, maxRuns - loaded) });
        if (stopped || load !== loads) return;
        dispatch({ type: 'runs-loaded', runs: page.runs });
        loaded += page.runs.length;
        cursor = page.nextCursor ?? undefined;
      } while (cursor && loaded < maxRuns);
    };
    const unsubscribe = source.subscribe({
      event(event) {
        queue.push(event);
        timer ??= setTimeout(flush, batchMs);
      },
      open() {
        dispatch({ type: 'connection', status: 'live' });
        setGeneration((g) => g + 1);
        loadHistory(++loads).catch((error: unknown) => {
          if (!stopped) dispatch({ type: 'notice', text: `Cannot read the runs: ${errorMessage(error)}`, error: true });
        });
      },
      closed() {
        if (!stopped) dispatch({ type: 'connection', status: 'offline' });
      },
    });
    return () => {
      stopped = true;
      clearTimeout(timer);
      unsubscribe();
    };
  }, [source, dispatch, pageSize, maxRuns, batchMs]);

  useEffect(() => {
    if (openRunId === null) return;
    let current = true;
    source.getRun(openRunId).then(
      (detail) => current && dispatch({ type: 'detail-loaded', ...detail }),
      (error: unknown) =>
        current && dispatch({ type: 'detail-failed', runId: openRunId, message: errorMessage(error) }),
    );
    return () => {
      current = false;
    };
  }, [source, dispatch, openRunId, generation]);
}
