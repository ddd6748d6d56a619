// What machine and runtime the figures come from.
import { cpus, loadavg, totalmem, tmpdir } from 'node:os';

export function systemInfo() {
  const list = cpus();
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpuModel: list[0]?.model ?? 'unknown',
    cpuCount: list.length,
    totalMemMB: Math.round(totalmem() / 2 ** 20),
    tmpdir: tmpdir(),
    date: new Date().toISOString(),
    loadAverage1m: Math.round(loadavg()[0] * 100) / 100,
  };
}

/** Other work on the machine skews every figure here (fsync latency most of all): say so. */
export function loadWarning(info) {
  const now = loadavg()[0];
  const worst = Math.max(now, info.loadAverage1m);
  return worst > info.cpuCount * 0.5
    ? `WARNING: 1-minute load average was ${info.loadAverage1m} at the start and ${Math.round(now * 100) / 100} at the end on ${info.cpuCount} CPUs: other processes competed for CPU and disk, so times may be inflated (fsync latency most of all).`
    : undefined;
}
