import { describe, expect, it } from 'vitest';
import { formatDuration, formatRelative } from '../../view/duration.js';

const T = 1_700_000_000_000;

describe('formatDuration', () => {
  it.each([
    [null, ''],
    [undefined, ''],
    [Number.NaN, ''],
    [-3, '0.0ms'],
    [0, '0.0ms'],
    [4.1234, '4.1ms'],
    [9.94, '9.9ms'],
    [9.96, '10ms'],
    [10, '10ms'],
    [53.4, '53ms'],
    [999.4, '999ms'],
    [999.6, '1.00s'],
    [1500, '1.50s'],
    [42_000, '42.00s'],
    [61_000, '1m01s'],
    [184_000, '3m04s'],
    [7_500_000, '2h05m'],
    [86_399_000, '23h59m'],
    [273_600_000, '3d04h'],
  ] as const)('%s → %j', (ms, text) => expect(formatDuration(ms)).toBe(text));

  it('shows what a view passes for a missing value', () => expect(formatDuration(null, '–')).toBe('–'));
});

describe('formatRelative', () => {
  it.each([
    [T + 4000, 'in 4.00s'],
    [T - 90_000, '1m30s ago'],
    [T + 10, 'now'],
    [T - 10, 'just now'],
  ])('%s → %j', (ms, text) => expect(formatRelative(ms, T)).toBe(text));
});
