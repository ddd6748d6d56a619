// Start to done as a user sees it: a plain `wfkit/node` app (its own process), one `wf start` on
// SQLite (its own process), and a client that POSTs the start to the app and waits for the run's
// completion on the runner's event stream. Every process hop and fsync of a run's life is in it.
import { Client } from '../../dist/api/client.js';
import { startAppProcess } from './app-process.js';
import { startRunnerProcesses } from './runner-processes.js';
import { createClient } from './start-run.js';
import { round, summarize } from './stats.js';
import { tempDbPath } from './temp-db.js';
import { deadline, withTimeout } from './timebox.js';

/**
 * The three processes, up and following the event stream. `once(n)` starts one run of the
 * `/noop/<n>` route and resolves with `{ startedAt, doneAt }` (the client's `performance.now()`)
 * once its `completed` arrives; `close()` stops everything.
 */
export async function startStartToDone({ token, steps }) {
  const db = tempDbPath('start-to-done');
  const runners = await startRunnerProcesses({ count: 1, database: db.path, token, cwd: db.dir });
  const [runnerUrl] = runners.urls;
  const app = await startAppProcess({ token, runnerUrl, steps });
  const client = createClient();
  const finished = new Map();
  const waiting = new Map();
  const stop = new AbortController();
  const opened = Promise.withResolvers();
  const following = new Client({ runnerUrl, token }).events({
    signal: stop.signal,
    retryFirstConnection: false,
    onOpen: () => opened.resolve(),
    onEvent(event) {
      if (event.type !== 'run' || event.run.status === 'running') return;
      const at = performance.now();
      const resolve = waiting.get(event.run.id);
      if (resolve) resolve({ at, status: event.run.status });
      else finished.set(event.run.id, { at, status: event.run.status });
    },
  });
  const done = (runId) => {
    const seen = finished.get(runId);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => waiting.set(runId, resolve));
  };
  const close = async () => {
    stop.abort();
    await following.catch(() => {});
    await client.close();
    await app.close();
    await runners.close();
    db.remove();
  };
  try {
    await withTimeout(opened.promise, 10_000, 'event stream open');
  } catch (error) {
    await close();
    throw error;
  }
  return {
    async once(n) {
      const startedAt = performance.now();
      const runId = await client.start(app.urlOf(`/noop/${n}`));
      const end = await withTimeout(done(runId), 10_000, `start-to-done run ${runId}`);
      finished.delete(runId);
      waiting.delete(runId);
      if (end.status !== 'completed') throw new Error(`start-to-done: run ${runId} ended ${end.status}`);
      return { startedAt, doneAt: end.at };
    },
    close,
  };
}

/**
 * For each step count, `runs` runs one after another (after `warmup`), the counts interleaved so
 * that drift in the machine's load touches each alike. Returns per step count the median, p99 and
 * min of start → completed, in ms.
 */
export async function measureStartToDone({ token, steps = [0, 2, 50], runs = 30, warmup = 3, maxMs = 30_000 }) {
  const stack = await startStartToDone({ token, steps });
  const once = async (n) => {
    const { startedAt, doneAt } = await stack.once(n);
    return doneAt - startedAt;
  };
  try {
    for (let i = 0; i < warmup; i++) for (const n of steps) await once(n);
    const samples = new Map(steps.map((n) => [n, []]));
    const time = deadline(maxMs);
    for (let i = 0; i < runs && !time.passed(); i++) for (const n of steps) samples.get(n).push(await once(n));
    return steps.map((n) => {
      const s = summarize(samples.get(n));
      return { steps: n, runs: s.n, medianMs: round(s.median), p99Ms: round(s.p99), minMs: round(s.min) };
    });
  } finally {
    await stack.close();
  }
}
