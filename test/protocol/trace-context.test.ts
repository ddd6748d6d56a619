import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent, stepSpanId, stepTraceContext } from '../../protocol/trace-context.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN = '00f067aa0ba902b7';

describe('traceparent (W3C Trace Context)', () => {
  it('formats and parses back the same ids, sampled or not', () => {
    expect(formatTraceparent(TRACE, SPAN)).toBe(`00-${TRACE}-${SPAN}-01`);
    expect(parseTraceparent(formatTraceparent(TRACE, SPAN))).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: true,
      traceparent: `00-${TRACE}-${SPAN}-01`,
    });
    expect(parseTraceparent(formatTraceparent(TRACE, SPAN, false))?.sampled).toBe(false);
  });

  it('reads the sampled bit from any flags, and a later version with more fields', () => {
    expect(parseTraceparent(`00-${TRACE}-${SPAN}-03`)?.sampled).toBe(true);
    expect(parseTraceparent(`01-${TRACE}-${SPAN}-01-future`)?.spanId).toBe(SPAN);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${SPAN}-01`],
    ['a short trace id', `00-${TRACE.slice(2)}-${SPAN}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN}-01`],
    ['an all-zero span id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['version ff', `ff-${TRACE}-${SPAN}-01`],
    ['version 00 with more fields', `00-${TRACE}-${SPAN}-01-extra`],
    ['no flags', `00-${TRACE}-${SPAN}`],
    ['an overlong header', `00-${TRACE}-${SPAN}-01-${'x'.repeat(600)}`],
  ])('ignores %s (the spec: never fail a request over it)', (_label, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });
});

describe("a step's span id", () => {
  it('is derived from the drive span and the index: the same on both sides, different per step and per drive', () => {
    expect(stepSpanId(SPAN, 0)).toMatch(/^[0-9a-f]{16}$/);
    expect(stepSpanId(SPAN, 0)).toBe(stepSpanId(SPAN, 0));
    const ids = new Set(Array.from({ length: 1000 }, (_, i) => stepSpanId(SPAN, i)));
    expect(ids.size).toBe(1000);
    expect(stepSpanId('1111111111111111', 0)).not.toBe(stepSpanId(SPAN, 0));
  });

  it("makes a step's trace context in the drive's trace, keeping its sampling", () => {
    const drive = parseTraceparent(formatTraceparent(TRACE, SPAN, false))!;
    const step = stepTraceContext(drive, 3);
    expect(step).toEqual({
      traceId: TRACE,
      spanId: stepSpanId(SPAN, 3),
      sampled: false,
      traceparent: `00-${TRACE}-${stepSpanId(SPAN, 3)}-00`,
    });
    expect(parseTraceparent(step.traceparent)).toEqual(step);
  });
});
