/**
 * The one duration format of `wf logs`, the TUI and the web dashboard: short and stable in
 * width, so columns line up in a terminal, and precise below 10 ms, where step overhead lives
 * (the web page's old `0 ms` hid it). Days for long sleeps and waits.
 * @example formatDuration(1500) // '1.50s'
 */
export function formatDuration(ms: number | null | undefined, missing = ''): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return missing;
  if (ms < 9.95) return `${Math.max(0, ms).toFixed(1)}ms`;
  if (ms < 999.5) return `${Math.round(ms)}ms`;
  if (ms < 59_995) return `${(ms / 1000).toFixed(2)}s`;
  const pad = (n: number): string => String(n).padStart(2, '0');
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d${pad(Math.floor((s % 86_400) / 3600))}h`;
}

/**
 * A moment relative to `now`, in the same format: `in 4.00s`, `3m02s ago`.
 * @example formatRelative(now + 4000, now) // 'in 4.00s'
 */
export function formatRelative(ms: number, now: number): string {
  const delta = ms - now;
  if (Math.abs(delta) < 1000) return delta >= 0 ? 'now' : 'just now';
  return delta >= 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`;
}
