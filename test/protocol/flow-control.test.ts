import { describe, expect, it } from 'vitest';
import { parseStartRequest } from '../../protocol/messages.js';
import { resolveFlowControl } from '../../protocol/flow-control.js';

describe('flow control on the wire', () => {
  it('resolves a key function against the payload and the period to ms', () => {
    expect(
      resolveFlowControl(
        { key: (p: { tenant: number }) => `tenant-${p.tenant}`, parallelism: 5, rate: 10, period: '1m' },
        { tenant: 42 },
      ),
    ).toEqual({ key: 'tenant-42', parallelism: 5, rate: 10, periodMs: 60_000 });
    expect(resolveFlowControl({ key: 'api', rate: 3, period: 2 }, undefined)).toEqual({
      key: 'api',
      rate: 3,
      periodMs: 2000,
    });
  });

  it('refuses an empty key, no limit, or a limit below 1, saying where', () => {
    expect(() => resolveFlowControl({ key: () => '', parallelism: 1 }, {})).toThrow(/non-empty string, got ""/);
    expect(() => resolveFlowControl({ key: 'a' }, {})).toThrow(/`parallelism` or `rate`, got neither \(key "a"\)/);
    expect(() => resolveFlowControl({ key: 'a', parallelism: 0 }, {})).toThrow(
      /`parallelism` in the flow control of key "a" to be an integer >= 1/,
    );
  });

  it('is carried by a start request, and checked by its parser', () => {
    const start = parseStartRequest({ url: 'http://127.0.0.1:3000/wf', flowControl: { key: 'k', parallelism: 2 } });
    expect(start.flowControl).toEqual({ key: 'k', parallelism: 2 });
    expect(parseStartRequest({ url: 'http://127.0.0.1:3000/wf' }).flowControl).toBeUndefined();
    expect(() => parseStartRequest({ url: 'http://127.0.0.1:3000/wf', flowControl: { key: 'k', rate: 1.5 } })).toThrow(
      /`rate`.*flowControl/,
    );
  });
});
