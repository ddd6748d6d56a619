import { readFileSync } from 'node:fs';

/**
 * Resident memory of another process, read from `/proc/<pid>/status` (Linux): what the kernel
 * holds for it, heap, buffers and native memory (SQLite, undici) included, not only the V8 heap.
 */

/** VmRSS in bytes, or undefined when the process is gone (or this is not Linux). */
export function residentBytes(pid: number): number | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return match ? Number(match[1]) * 1024 : undefined;
}

export interface MemorySampler {
  /** The highest VmRSS seen so far, in bytes (0 before the first sample). */
  peak(): number;
  /** The first sample, taken at once: the baseline the bound is judged against. */
  readonly baseline: number;
  stop(): void;
}

/** Samples VmRSS of `pid` every `everyMs` until stopped, keeping the peak. */
export function sampleMemory(pid: number, everyMs = 50): MemorySampler {
  const baseline = residentBytes(pid) ?? 0;
  let peak = baseline;
  const timer = setInterval(() => {
    const now = residentBytes(pid);
    if (now !== undefined && now > peak) peak = now;
  }, everyMs);
  timer.unref();
  return { baseline, peak: () => peak, stop: () => clearInterval(timer) };
}

/** Bytes as MiB with one decimal, for messages. */
export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
