// Throughput: many runs in flight at once; steps committed per second.
import { diffStats } from './store-probe.js';
import { round } from './stats.js';
import { deadline, withTimeout } from './timebox.js';

/** One batch: start `runs` runs at once, wait until all complete (or the deadline). */
async function batch({ runs, steps, harness, start, time }) {
  const stats0 = harness.probe.snapshot();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let completed = 0;
  const ids = await Promise.all(Array.from({ length: runs }, () => start()));
  const startPhaseMs = performance.now() - t0;
  const results = await Promise.allSettled(
    ids.map((id) =>
      withTimeout(harness.waitFor(id, time.left() + 1), time.left() + 1, 'throughput').then(() => completed++),
    ),
  );
  const elapsedMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const stats = diffStats(stats0, harness.probe.snapshot());
  const failures = results.filter((r) => r.status === 'rejected');
  return {
    completed,
    failed: failures.length,
    firstError: failures[0]?.reason?.message,
    startPhaseMs,
    elapsedMs,
    stepsPerSec: (completed * steps) / (elapsedMs / 1000),
    storeMs: harness.probe.storeMs(stats),
    // CPU of this process (runner, plus the app when it shares the process); store time includes fsync waits.
    cpuMs: (cpu.user + cpu.system) / 1000,
    writeTx: harness.probe.writes(stats),
    calls: Object.fromEntries(Object.entries(stats).map(([k, v]) => [k, v.calls])),
  };
}

/**
 * The first batch is reported separately as "cold" (new connections, code not yet optimized);
 * the figure is the median of `batches` more. Everything stops at `maxMs`.
 */
export async function measureThroughput({ runs = 100, steps = 10, batches = 3, maxMs = 60_000, harness, start }) {
  const time = deadline(maxMs);
  const cold = await batch({ runs, steps, harness, start, time });
  const warm = [];
  for (let i = 0; i < batches && !time.passed(); i++) warm.push(await batch({ runs, steps, harness, start, time }));
  const all = [cold, ...warm];
  const mid =
    warm.length > 0 ? warm.toSorted((a, b) => a.stepsPerSec - b.stepsPerSec)[Math.floor((warm.length - 1) / 2)] : cold;
  return {
    runs,
    stepsPerRun: steps,
    batches: warm.length,
    completed: mid.completed,
    failed: all.reduce((sum, b) => sum + b.failed, 0),
    firstError: all.find((b) => b.firstError)?.firstError,
    stepsPerSec: round(mid.stepsPerSec, 0),
    coldStepsPerSec: round(cold.stepsPerSec, 0),
    elapsedMs: round(mid.elapsedMs, 1),
    startPhaseMs: round(mid.startPhaseMs, 1),
    storeMs: round(mid.storeMs, 1),
    cpuMs: round(mid.cpuMs, 1),
    writeTx: mid.writeTx,
    storeCalls: mid.calls,
    allStepsPerSec: all.map((b) => round(b.stepsPerSec, 0)),
  };
}
