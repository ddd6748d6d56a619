import { describe, expect, it } from 'vitest';
import { displayValue } from '../../protocol/display.js';
import { encodeValue } from '../../protocol/values.js';

const show = (value: unknown): string => displayValue(encodeValue(value, 'test'));

describe('displayValue', () => {
  it('shows plain data as pretty JSON', () => {
    expect(show({ a: 1, b: ['x', true, null] })).toBe('{\n  "a": 1,\n  "b": [\n    "x",\n    true,\n    null\n  ]\n}');
    expect(show('HELLO')).toBe('"HELLO"');
    expect(show([])).toBe('[]');
  });

  it('names the types JSON cannot show', () => {
    expect(show(new Date(0))).toBe('Date(1970-01-01T00:00:00.000Z)');
    expect(show(10n)).toBe('10n');
    expect(show({ u: undefined, n: Number.NaN })).toBe('{\n  "u": undefined,\n  "n": NaN\n}');
    expect(show(new Map([[1, 'a']]))).toBe('Map {\n  1 => "a"\n}');
    expect(show(new Set(['x']))).toBe('Set [\n  "x"\n]');
  });

  it('shows absent output as undefined and unreadable text as it is', () => {
    expect(displayValue(null)).toBe('undefined');
    expect(displayValue(undefined)).toBe('undefined');
    expect(displayValue('not devalue')).toBe('not devalue');
  });

  it('keeps markup as text (the dashboards render it as data)', () => {
    expect(show('<script>alert(1)</script>')).toBe('"<script>alert(1)</script>"');
  });

  it('marks a repeated reference cycle instead of recursing forever', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    expect(show(a)).toContain('[Circular]');
  });
});
