import type { Change } from '../store/types.js';

/**
 * The `started` lines among changes fencing refused (their drive had lost the run's lease), as
 * `executions-reported` counts: the route did run those steps, so the count should say so.
 * @example refusedStarts([started(0), started(0), succeeded(0)]) // [{ type: 'executions-reported', index: 0, count: 2, … }]
 */
export function refusedStarts(changes: readonly Change[]): Change[] {
  const counts = new Map<string, Extract<Change, { type: 'executions-reported' }>>();
  for (const change of changes) {
    // A quick step's start can ride in its result (`started`, drive/chunk-changes.ts).
    if (change.type !== 'step-started' && !(change.type === 'step-succeeded' && change.started)) continue;
    const key = `${change.runId}:${change.index}`;
    const entry = counts.get(key) ?? {
      type: 'executions-reported',
      runId: change.runId,
      index: change.index,
      count: 0,
    };
    entry.count++;
    counts.set(key, entry);
  }
  return [...counts.values()];
}
