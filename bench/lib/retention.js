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
 * with `retentionMs`; samples the store's size (pages + WAL) every `sampleMs`. Flat means: after
 * the first retention window (the warm-up, when nothing is old enough yet), the size stops growing.
 */
export async function measureRetention({ token, log, runs = 6000, steps = 5, concurrency = 50, retentionMs = 3_000, sampleMs = 2_000, maxMs = 45_000 }) {
  const harness = await startRunner({ token, detect: 'events', label: 'retention', runnerOptions: { retention: retentionMs, logger: quiet } });
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
      samples.push({ atMs: round(performance.now() - t0, 0), bytes: await store.retention.sizeBytes(), completed, runsInStore: (await store.stats(Date.now())).runs.completed });
      await sleep(sampleMs);
    }
  })();
  try {
    const worker = async () => {
      while (started < runs && !time.passed()) {
        started++;
        try {
          await harness.waitFor(await startInProcess(harness.runner, url), Math.max(1, time.left()));
          completed++;
        } catch {
          failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    await sampler;
    samples.push({ atMs: round(performance.now() - t0, 0), bytes: await store.retention.sizeBytes(), completed, runsInStore: (await store.stats(Date.now())).runs.completed });
    log?.(`retention: ${completed} runs in ${round((performance.now() - t0) / 1000, 1)} s`);
  } finally {
    await app.close();
    await harness.close();
  }
  // After the warm-up (one retention window and a sample), pruning keeps pace: the size stays where it got to.
  const steady = samples.filter((s) => s.atMs >= retentionMs + sampleMs);
  const first = steady[0] ?? samples[0];
  const last = samples[samples.length - 1];
  const peak = Math.max(...steady.map((s) => s.bytes), first.bytes);
  return {
    runs: completed, failed, steps, concurrency, retentionMs, elapsedMs: last.atMs,
    bytesAfterWarmup: first.bytes, bytesAtEnd: last.bytes, peakBytesAfterWarmup: peak,
    growthAfterWarmup: round(last.bytes / first.bytes, 2),
    runsAfterWarmup: last.completed - first.completed,
    samples,
  };
}
