import type { StoreInfo } from '../api/store-info.js';

const UNITS = ['B', 'KB', 'MB', 'GB', 'TB'];

/**
 * Bytes in the largest unit that keeps the number at or above 1, three significant digits (1000-based, as disks are sold).
 * @example formatBytes(12_345_678) // '12.3 MB'
 */
export function formatBytes(bytes: number): string {
  let value = Math.max(0, bytes);
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value : value.toPrecision(3)} ${UNITS[unit]}`;
}

/** Retention in whole days, hours or minutes: `30 days`, `12 hours`. */
function formatRetention(ms: number): string {
  for (const [size, name] of [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ] as const) {
    if (ms >= size) {
      const n = Math.round(ms / size);
      return `${n} ${name}${n === 1 ? '' : 's'}`;
    }
  }
  return `${ms} ms`;
}

/**
 * The dashboards' line about the store.
 * @example describeStoreInfo({ sizeBytes: 2_400_000, retentionMs: 7 * 86_400_000 }) // 'database 2.40 MB · finished runs kept 7 days'
 */
export function describeStoreInfo(info: StoreInfo): string {
  const kept =
    info.retentionMs === 0 ? 'finished runs kept forever' : `finished runs kept ${formatRetention(info.retentionMs)}`;
  return `database ${formatBytes(info.sizeBytes)} · ${kept}`;
}
