import { describe, expect, it } from 'vitest';
import { boundStepLogs } from '../../protocol/step-logs.js';

describe('boundStepLogs (the runner applies the bounds again)', () => {
  it('keeps logs within the bounds as they are, and drops (counting) lines past the character bound', () => {
    const small = { lines: [{ at: 1, level: 'log' as const, message: 'hi', fields: { a: 1 } }] };
    expect(boundStepLogs(small)).toBe(small);
    const big = {
      lines: Array.from({ length: 10 }, (_, i) => ({ at: i, level: 'log' as const, message: 'x'.repeat(10_000) })),
      dropped: 5,
    };
    const bounded = boundStepLogs(big);
    expect(bounded.lines).toHaveLength(6);
    expect(bounded.dropped).toBe(9);
  });
});
