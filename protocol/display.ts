import { decodeValue } from './values.js';

/**
 * A stored step value as people read it: pretty JSON, plus the types JSON cannot show
 * (`Date(…)`, `Map {…}`, `Set […]`, `10n`, `undefined`). Shared by `wf logs` and both dashboards.
 * Unreadable text is shown as it is.
 * @example displayValue('[{"a":1},2]') // '{\n  "a": 2\n}'
 */
export function displayValue(text: string | null | undefined): string {
  if (text === null || text === undefined) return 'undefined';
  let value: unknown;
  try {
    value = decodeValue(text);
  } catch {
    return text;
  }
  return render(value, '', new Set());
}

function render(value: unknown, indent: string, seen: Set<object>): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : Object.is(value, -0) ? '-0' : String(value);
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? String(value);
  if (value instanceof Date) return `Date(${Number.isNaN(value.getTime()) ? 'Invalid' : value.toISOString()})`;
  if (value instanceof RegExp) return String(value);
  if (seen.has(value)) return '[Circular]';
  seen.add(value);
  const inner = indent + '  ';
  const block = (open: string, close: string, items: string[]): string =>
    items.length === 0 ? open + close : `${open}\n${items.map((item) => inner + item).join(',\n')}\n${indent}${close}`;
  let out: string;
  if (value instanceof Map)
    out =
      'Map ' +
      block(
        '{',
        '}',
        [...value].map(([k, v]) => `${render(k, inner, seen)} => ${render(v, inner, seen)}`),
      );
  else if (value instanceof Set)
    out =
      'Set ' +
      block(
        '[',
        ']',
        [...value].map((v) => render(v, inner, seen)),
      );
  else if (Array.isArray(value))
    out = block(
      '[',
      ']',
      value.map((v) => render(v, inner, seen)),
    );
  else
    out = block(
      '{',
      '}',
      Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${render(v, inner, seen)}`),
    );
  seen.delete(value);
  return out;
}
