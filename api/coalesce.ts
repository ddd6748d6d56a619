/**
 * Runs `task` when asked, never twice at once and at most once per burst: requests within
 * `delayMs` of the first make one run, and requests while it runs make exactly one more after
 * it. With `delayMs` 0 an idle request starts the task at once (no timer turn: the runner's poll
 * loops use it on their hot path). Edge-safe: the dashboards use it to read an open run again when
 * slim events say it changed.
 * @example const refresh = coalesce(() => loadRun(id)); onEvent(() => refresh());
 */
export function coalesce(task: () => Promise<void>, delayMs = 25): () => void {
  let state: 'idle' | 'waiting' | 'running' = 'idle';
  let again = false;
  const run = async (): Promise<void> => {
    state = 'running';
    do {
      again = false;
      await task().catch(() => {}); // the task reports its own failures; a later request tries again
    } while (again);
    state = 'idle';
  };
  return () => {
    if (state === 'running') again = true;
    if (state !== 'idle') return;
    if (delayMs === 0) return void run();
    state = 'waiting';
    setTimeout(() => void run(), delayMs);
  };
}
