// Retention under load: the SQLite database's size over a bounded stream of runs, with a short
// retention (the runner prunes in the background while it drives), sampled at intervals.
import { startApp } from './app.js';
import { startRunner } from './runner-harness.js';
import { startInProcess } from './start-run.js';
import { round } from './stats.js';
import { deadline, sleep } from './timebox.js';
import { noop } from './workflows.js';

/** The pruner says what it pruned at every pass (every 250 ms with a 3 s retention): not on the bench's terminal. */
const quiet = { info() {}, warn: (message) => console.warn(message), error: (message) => console.error(message) };

/**
 * Keeps `concurrency` runs of `steps` steps in flight until `runs` have started or `maxMs` pass,
 * with `retentionMs`; samples the store's size (pages + WAL) every `sampleMs`. Flat means: once
 * runs are old enough to be pruned, the size stops growing while the number of runs done keeps rising.
 */
export async function measureRetention({
  token,
  log,
  runs = 6000,
  steps = 5,
  concurrency = 50,
  retentionMs = 3_000,
  sampleMs = 2_000,
  maxMs = 45_000,
}) {
  const harness = await startRunner({
    token,
    detect: 'events',
    label: 'retention',
    runnerOptions: { retention: retentionMs, logger: quiet },
  });
  const app = await startApp({ routes: { '/noop': { workflow: noop(steps) } }, token });
  const url = app.urlOf('/noop');
  const store = harness.probe.store;
  const samples = [];
  const time = deadline(maxMs);
  const t0 = performance.now();
  let started = 0;
  let completed = 0;
  let failed = 0;
  const sampler = (async () => {
    while (!time.passed() && (started < runs || completed + failed < started)) {
      samples.push({
        atMs: round(performance.now() - t0, 0),
        bytes: await store.retention.sizeBytes(),
        completed,
        runsInStore: (await store.stats(Date.now())).runs.completed,
      });
      await sleep(sampleMs);
    }
  })();
  try {
    const worker = async () => {
      while (started < runs && !time.passed()) {
        started++;
        try {
          // Runs started before the deadline may finish after it: only starting stops there.
          await harness.waitFor(await startInProcess(harness.runner, url), time.left() + 15_000);
          completed++;
        } catch {
          failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    await sampler;
    samples.push({
      atMs: round(performance.now() - t0, 0),
      bytes: await store.retention.sizeBytes(),
      completed,
      runsInStore: (await store.stats(Date.now())).runs.completed,
    });
    log?.(`retention: ${completed} runs in ${round((performance.now() - t0) / 1000, 1)} s`);
  } finally {
    await app.close();
    await harness.close();
  }
  // From a quarter of the way on (past the first retention window), pruning keeps pace: the size
  // stays where it got to, while without pruning it would grow with the runs (about x runsGrowth).
  const reference =
    samples.find((s) => s.atMs >= Math.max(retentionMs + sampleMs, samples.at(-1).atMs / 4)) ?? samples[0];
  const last = samples[samples.length - 1];
  return {
    runs: completed,
    failed,
    steps,
    concurrency,
    retentionMs,
    elapsedMs: last.atMs,
    reference: {
      atMs: reference.atMs,
      bytes: reference.bytes,
      runs: reference.completed,
      runsInStore: reference.runsInStore,
    },
    end: { bytes: last.bytes, runs: last.completed, runsInStore: last.runsInStore },
    peakBytes: Math.max(...samples.filter((s) => s.atMs >= reference.atMs).map((s) => s.bytes)),
    growth: round(last.bytes / reference.bytes, 2),
    runsGrowth: round(last.completed / Math.max(1, reference.completed), 2),
    samples,
  };
}
