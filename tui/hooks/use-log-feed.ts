import { useEffect, type Dispatch } from 'react';
import type { LogEntry, LogFeed } from '../log-feed.js';
import type { Action } from '../state.js';

/**
 * Feeds the log pane: lines from the feed reach the reducer in batches (a dev server printing a
 * burst at start is one render), the backlog first.
 */
export function useLogFeed(feed: LogFeed | undefined, dispatch: Dispatch<Action>, batchMs = 50): void {
  useEffect(() => {
    if (!feed) return;
    let queue: LogEntry[] = [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const flush = (): void => {
      timer = undefined;
      const entries = queue;
      queue = [];
      if (entries.length > 0) dispatch({ type: 'log', entries });
    };
    const unsubscribe = feed.subscribe((entries) => {
      queue.push(...entries);
      timer ??= setTimeout(flush, batchMs);
    });
    return () => {
      clearTimeout(timer);
      unsubscribe();
    };
  }, [feed, dispatch, batchMs]);
}
