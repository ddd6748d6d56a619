/** One line of the log pane: the app's own output, or `wf dev` telling what it did or found. */
export interface LogEntry {
  source: 'app' | 'wf';
  text: string;
  /** @default 'info' */
  level?: 'info' | 'warn' | 'error';
  /** For app lines: which stream it came from. */
  stream?: 'stdout' | 'stderr';
}

/**
 * Lines for the dashboard's log pane, from whoever produces them (`wf dev`'s app process, its
 * tunnel and probe). Keeps the last `cap` lines so a dashboard that subscribes late (or again)
 * starts with what was already said.
 */
export interface LogFeed {
  /** Shown on the pane's title line (e.g. the app's command). */
  readonly title: string;
  push(entry: LogEntry): void;
  /** Calls `listener` with the backlog at once, then with each new line; returns the unsubscribe. */
  subscribe(listener: (entries: readonly LogEntry[]) => void): () => void;
}

/** @example const feed = createLogFeed('npm run dev'); feed.push({ source: 'app', text: 'ready' }); */
export function createLogFeed(title: string, cap = 500): LogFeed {
  let backlog: LogEntry[] = [];
  const listeners = new Set<(entries: readonly LogEntry[]) => void>();
  return {
    title,
    push(entry) {
      backlog.push(entry);
      if (backlog.length > cap) backlog = backlog.slice(-cap);
      for (const listener of listeners) listener([entry]);
    },
    subscribe(listener) {
      listeners.add(listener);
      if (backlog.length > 0) listener([...backlog]);
      return () => listeners.delete(listener);
    },
  };
}
