// Bytes exchanged between runner and app per run, as the number of steps grows.
import { diffCounts } from './byte-counter.js';
import { median, round } from './stats.js';
import { deadline } from './timebox.js';

/** One run of `steps` on `url`, `repeat` times; per-run medians of every counter. */
async function bytesOf({ url, steps, repeat, harness, app, start, time }) {
  const rows = [];
  for (let i = 0; i < repeat && !time.passed(); i++) {
    const before = app.counter.snapshot();
    const t0 = performance.now();
    await harness.waitFor(await start(url), Math.max(1_000, time.left()));
    const ms = performance.now() - t0;
    rows.push({ ...diffCounts(before, app.counter.snapshot()), ms });
  }
  const pick = (key) => median(rows.map((r) => r[key]));
  const runnerToApp = pick('requestBodyBytes');
  const appToRunner = pick('responseBodyBytes');
  return {
    steps,
    runs: rows.length,
    driveRequests: pick('driveRequests'),
    runnerToAppBodyBytes: runnerToApp,
    appToRunnerBodyBytes: appToRunner,
    totalBodyBytes: runnerToApp + appToRunner,
    wireBytes: pick('wireBytesIn') + pick('wireBytesOut'),
    bodyBytesPerStep: round((runnerToApp + appToRunner) / steps, 1),
    runMs: round(pick('ms'), 1),
  };
}

/** routeFor(steps) -> url. Returns rows plus the 200/100 growth ratios. */
export async function measureBytes({ stepCounts, routeFor, repeat = 3, maxMs = 30_000, harness, app, start }) {
  const time = deadline(maxMs);
  const rows = [];
  for (const steps of stepCounts) {
    if (time.passed()) break;
    rows.push(await bytesOf({ url: routeFor(steps), steps, repeat, harness, app, start, time }));
  }
  const at = (n) => rows.find((r) => r.steps === n);
  const ratio = (key) => (at(200) && at(100) ? round(at(200)[key] / at(100)[key], 2) : null);
  return {
    rows,
    ratio200over100: {
      total: ratio('totalBodyBytes'),
      runnerToApp: ratio('runnerToAppBodyBytes'),
      appToRunner: ratio('appToRunnerBodyBytes'),
      wire: ratio('wireBytes'),
    },
  };
}
