import { describe, expect, it } from 'vitest';
import {
  glyph,
  isRunStatus,
  RUN_STATUSES,
  statusColor,
  STEP_STATUSES,
  zeroCounts,
  type Status,
} from '../../view/status.js';

describe('status', () => {
  it.each<[Status, string, string]>([
    ['queued', '○', 'gray'],
    ['running', '▶', 'cyan'],
    ['sleeping', '◔', 'blue'],
    ['waiting', '◌', 'magenta'],
    ['completed', '✓', 'green'],
    ['succeeded', '✓', 'green'],
    ['retrying', '↻', 'yellow'],
    ['failed', '✗', 'red'],
    ['cancelled', '⊘', 'gray'],
  ])('%s: %s in %s', (status, g, color) => {
    expect(glyph(status)).toBe(g);
    expect(statusColor(status)).toBe(color);
  });

  it('gives every run status its own glyph, and an unknown one a question mark', () => {
    expect(new Set(RUN_STATUSES.map(glyph)).size).toBe(RUN_STATUSES.length);
    expect(glyph('exploded' as Status)).toBe('?');
    expect(statusColor('exploded' as Status)).toBe('gray');
  });

  it('narrows input to a run status, and counts every one from zero', () => {
    expect(RUN_STATUSES.filter(isRunStatus)).toEqual(RUN_STATUSES);
    expect([null, '', 'succeeded', 'QUEUED', 1].some(isRunStatus)).toBe(false);
    expect(zeroCounts()).toEqual(Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])));
    expect(STEP_STATUSES).toHaveLength(5);
  });
});
