// Child process of the RSS measurement: only the runner (Runner + SQLite) lives here, so this
// process's RSS is the runner's. The app that holds the steps runs in the parent.
// Protocol: env WF_BENCH_URL, WF_BENCH_TOKEN, WF_BENCH_RUNS; stdout one JSON object per line
// ({type:'started'}, then {type:'result'}); stdin line "release" marks the end of the hold phase.
import { createInterface } from 'node:readline';
import { startRunner } from './lib/runner-harness.js';
import { startInProcess } from './lib/start-run.js';
import { withTimeout, sleep } from './lib/timebox.js';

const url = process.env.WF_BENCH_URL;
const token = process.env.WF_BENCH_TOKEN;
const runs = Number(process.env.WF_BENCH_RUNS ?? 1000);
const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
const mb = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10;

const harness = await startRunner({
  token,
  label: 'rss',
  runnerOptions: { concurrency: runs + 24, dispatch: { connections: runs + 24 } },
});
await sleep(200);
const baseline = process.memoryUsage();
let peak = baseline.rss;
let peakHeld = baseline.rss;
let peakHeap = baseline.heapUsed;
let held = true;
let samples = 0;
const sampler = setInterval(() => {
  const { rss, heapUsed } = process.memoryUsage();
  samples++;
  peak = Math.max(peak, rss);
  peakHeap = Math.max(peakHeap, heapUsed);
  if (held) peakHeld = Math.max(peakHeld, rss);
}, 50);

let released;
const release = new Promise((resolve) => (released = resolve));
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() === 'release') {
    held = false;
    released(process.memoryUsage());
  }
});

let result;
try {
  const t0 = performance.now();
  const ids = [];
  for (let i = 0; i < runs; i++) ids.push(await startInProcess(harness.runner, url));
  const startMs = performance.now() - t0;
  send({ type: 'started', runs: ids.length, startMs });
  const atRelease = await withTimeout(release, 60_000, 'waiting for the parent to release the steps');
  const t1 = performance.now();
  await Promise.all(ids.map((id) => harness.waitFor(id, 60_000)));
  result = {
    type: 'result',
    runs,
    baselineRssMB: mb(baseline.rss),
    peakRssMB: mb(peak),
    peakRssWhileHeldMB: mb(peakHeld),
    // Where the held-phase memory is: V8 heap vs off-heap (buffers, sockets, SQLite, wasm).
    atRelease: Object.fromEntries(Object.entries(atRelease).map(([k, v]) => [`${k}MB`, mb(v)])),
    baseline: Object.fromEntries(Object.entries(baseline).map(([k, v]) => [`${k}MB`, mb(v)])),
    peakHeapUsedMB: mb(peakHeap),
    perRunKB: Math.round(((peak - baseline.rss) / runs / 1024) * 10) / 10,
    startAllMs: Math.round(startMs),
    drainAfterReleaseMs: Math.round(performance.now() - t1),
    samples,
  };
} catch (error) {
  result = { type: 'result', error: String(error?.stack ?? error) };
} finally {
  clearInterval(sampler);
  lines.close();
  await harness.close();
}
send(result);
