// Sequential per-step overhead: one run at a time, start to committed completion. Variants are
// interleaved run by run, so load from other processes hits all of them alike.
import { diffCounts } from './byte-counter.js';
import { diffStats } from './store-probe.js';
import { median, round, summarize } from './stats.js';
import { deadline } from './timebox.js';

async function oneRun({ harness, app, start }) {
  const stats0 = harness.probe.snapshot();
  const bytes0 = app.counter.snapshot();
  const t0 = performance.now();
  const runId = await start();
  const startMs = performance.now() - t0;
  await harness.waitFor(runId);
  const ms = performance.now() - t0;
  const stats = diffStats(stats0, harness.probe.snapshot());
  return {
    ms,
    startMs,
    storeMs: harness.probe.storeMs(stats),
    writes: harness.probe.writes(stats),
    drives: diffCounts(bytes0, app.counter.snapshot()).driveRequests,
  };
}

/**
 * variants: [{ label, harness, start }] where start() starts one run and returns its id.
 * `warmup` unmeasured rounds, then up to `runs` measured rounds within `maxMs`.
 * Reports per variant: run time, per-step time, store time, write transactions, drive requests.
 */
export async function measureSequential({ steps, runs, warmup = 3, maxMs = 30_000, app, variants }) {
  const time = deadline(maxMs);
  for (let i = 0; i < warmup && !time.passed(); i++) for (const v of variants) await oneRun({ ...v, app });
  const samples = variants.map(() => []);
  for (let i = 0; i < runs && !time.passed(); i++) {
    for (const [k, v] of variants.entries()) samples[k].push(await oneRun({ ...v, app }));
  }
  return variants.map((v, k) => {
    const rows = samples[k];
    const run = summarize(rows.map((r) => r.ms));
    return {
      label: v.label,
      target: v.target,
      steps,
      runs: rows.length,
      runMs: { median: round(run.median), p99: round(run.p99), min: round(run.min), max: round(run.max) },
      perStepMs: round(run.median / steps, 4),
      startCallMs: round(median(rows.map((r) => r.startMs))),
      storeMsPerRun: round(median(rows.map((r) => r.storeMs))),
      writeTxPerRun: median(rows.map((r) => r.writes)),
      driveRequestsPerRun: median(rows.map((r) => r.drives)),
    };
  });
}
