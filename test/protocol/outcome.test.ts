import { describe, expect, it } from 'vitest';
import { ProtocolError, WorkflowError } from '../../protocol/errors.js';
import { decodeOutcome, encodeOutcome, isTerminal, OutcomeLineSplitter, type Outcome } from '../../protocol/outcome.js';

const encoder = new TextEncoder();

const EVERY_KIND: Array<[string, Outcome]> = [
  ['started', { t: 'started', index: 0, name: 'load-user', kind: 'run', group: 1 }],
  ['step with output', { t: 'step', index: 3, name: 'charge', kind: 'run', output: '{"ok":true}', durationMs: 12.5 }],
  ['step without output (undefined result)', { t: 'step', index: 0, name: 'log', kind: 'run', durationMs: 0 }],
  ['done with output', { t: 'done', output: '"finished"' }],
  ['done without output', { t: 'done' }],
  [
    'failed in a step, every field',
    {
      t: 'failed',
      error: {
        name: 'RetryAfterError',
        message: 'busy',
        stack: 'RetryAfterError: busy\n    at x',
        code: 'RETRY_AFTER',
      },
      retryable: true,
      retryAfterMs: 1500,
      step: { index: 2, name: 'call-api', kind: 'run', durationMs: 3.25 },
    },
  ],
  [
    'failed outside any step',
    { t: 'failed', error: { name: 'DeterminismError', message: 'mismatch' }, retryable: false },
  ],
  ['continue', { t: 'continue' }],
  [
    'failed in a step with its own retry policy',
    {
      t: 'failed',
      error: { name: 'Error', message: 'flaky' },
      retryable: true,
      step: { index: 0, name: 'charge', kind: 'run', durationMs: 1, retries: 5, retryDelayMs: 20 },
    },
  ],
  [
    'suspend with a sleep, a wait and a call',
    {
      t: 'suspend',
      steps: [
        { kind: 'sleep', index: 0, name: 'nap', group: 1, until: 1_700_000_000_000 },
        { kind: 'wait', index: 1, name: 'approval', group: 1, eventId: 'order-1', until: 1_700_000_060_000 },
        {
          kind: 'call',
          index: 2,
          name: 'charge',
          group: 1,
          request: {
            url: 'https://api.test/charge',
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"a":1}',
            timeoutMs: 500,
            retries: 2,
            throwHttpErrors: true,
          },
        },
      ],
    },
  ],
  [
    'suspend with an invoke (a child run to start)',
    {
      t: 'suspend',
      steps: [
        {
          kind: 'invoke',
          index: 0,
          name: 'child',
          group: 1,
          request: { url: 'https://app.test/child', body: '{"id":1}', headers: { 'x-a': '1' }, retries: 1 },
        },
      ],
    },
  ],
  [
    'suspend with a flow-controlled invoke',
    {
      t: 'suspend',
      steps: [
        {
          kind: 'invoke',
          index: 0,
          name: 'child',
          group: 1,
          request: {
            url: 'https://app.test/child',
            body: '',
            headers: {},
            flowControl: { key: 'k', parallelism: 1, rate: 2, periodMs: 500 },
          },
        },
      ],
    },
  ],
  ['cancel', { t: 'cancel' }],
];

function protocolError(fn: () => unknown): ProtocolError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    expect(WorkflowError.is(error) && error.code).toBe('PROTOCOL');
    return error as ProtocolError;
  }
  throw new Error('Expected a ProtocolError, nothing was thrown.');
}

describe('encodeOutcome / decodeOutcome', () => {
  it.each(EVERY_KIND)('round-trips %s', (_label, outcome) => {
    const line = encodeOutcome(outcome);
    expect(line.endsWith('\n')).toBe(true);
    expect(line.indexOf('\n')).toBe(line.length - 1);
    expect(decodeOutcome(line.trimEnd())).toEqual(outcome);
  });

  it('covers every kind of the union', () => {
    expect(new Set(EVERY_KIND.map(([, o]) => o.t))).toEqual(
      new Set(['started', 'step', 'done', 'failed', 'continue', 'suspend', 'cancel']),
    );
  });

  it('reads a started line without a group (an older route) as group 0', () => {
    expect(decodeOutcome('{"t":"started","index":0,"name":"a","kind":"run"}')).toEqual({
      t: 'started',
      index: 0,
      name: 'a',
      kind: 'run',
      group: 0,
    });
  });

  it('keeps a newline inside a value on one line', () => {
    const outcome: Outcome = { t: 'done', output: JSON.stringify('a\nb') };
    const line = encodeOutcome(outcome);
    expect(line.split('\n')).toHaveLength(2);
    expect(decodeOutcome(line)).toEqual(outcome);
  });

  it('tells terminal outcomes from step lines', () => {
    const terminal = EVERY_KIND.filter(([, o]) => isTerminal(o)).map(([, o]) => o.t);
    expect(new Set(terminal)).toEqual(new Set(['done', 'failed', 'continue', 'suspend', 'cancel']));
  });
});

describe('decodeOutcome rejects malformed lines', () => {
  it.each([
    ['not JSON', '{"t":"done"', /Malformed outcome line \(not JSON\)/],
    ['a JSON array', '[1,2]', /Expected an outcome line to be a JSON object, got an array/],
    ['no kind', '{"index":0}', /`t` in an outcome line to be a string/],
    [
      'started without name',
      '{"t":"started","index":0,"kind":"run"}',
      /`name` in the "started" outcome to be a string/,
    ],
    [
      'started with negative index',
      '{"t":"started","index":-1,"name":"a","kind":"run"}',
      /`index` in the "started" outcome to be an integer >= 0, got number -1/,
    ],
    [
      'started with unknown step kind',
      '{"t":"started","index":0,"name":"a","kind":"teleport"}',
      /`kind` in the "started" outcome to be one of run, sleep, wait, call, invoke, got "teleport"/,
    ],
    ['suspend without steps', '{"t":"suspend","steps":[]}', /`steps` in the "suspend" outcome to be a non-empty array/],
    [
      'suspend with an unknown kind',
      '{"t":"suspend","steps":[{"kind":"nap","index":0,"name":"a","group":1}]}',
      /`kind` in `steps\[0\]` in the "suspend" outcome to be sleep, wait, call or invoke, got "nap"/,
    ],
    [
      'suspended sleep without until',
      '{"t":"suspend","steps":[{"kind":"sleep","index":0,"name":"a","group":1}]}',
      /`until` in `steps\[0\]` in the "suspend" outcome to be a number/,
    ],
    [
      'suspended wait without eventId',
      '{"t":"suspend","steps":[{"kind":"wait","index":0,"name":"a","group":1,"until":5}]}',
      /`eventId` in `steps\[0\]` in the "suspend" outcome to be a string/,
    ],
    [
      'suspended call without method',
      '{"t":"suspend","steps":[{"kind":"call","index":0,"name":"a","group":1,"request":{"url":"http://x","headers":{}}}]}',
      /`method` in `request` in `steps\[0\]` in the "suspend" outcome to be a string/,
    ],
    [
      'suspended invoke with flow control but no limit',
      '{"t":"suspend","steps":[{"kind":"invoke","index":0,"name":"a","group":1,"request":{"url":"http://x","body":"","headers":{},"flowControl":{"key":"k"}}}]}',
      /`flowControl` of `request` in `steps\[0\]` in the "suspend" outcome to set `parallelism` or `rate`/,
    ],
    [
      'suspended invoke with a flow control key not a string',
      '{"t":"suspend","steps":[{"kind":"invoke","index":0,"name":"a","group":1,"request":{"url":"http://x","body":"","headers":{},"flowControl":{"key":5,"parallelism":1}}}]}',
      /`key` in `flowControl` of `request` in `steps\[0\]` in the "suspend" outcome to be a string/,
    ],
    [
      'step without durationMs',
      '{"t":"step","index":0,"name":"a","kind":"run"}',
      /`durationMs` in the "step" outcome to be a number/,
    ],
    [
      'step with numeric output',
      '{"t":"step","index":0,"name":"a","kind":"run","durationMs":1,"output":5}',
      /`output` in the "step" outcome to be a string, got number 5/,
    ],
    [
      'done with object output',
      '{"t":"done","output":{"a":1}}',
      /`output` in the "done" outcome to be a string, got an object/,
    ],
    [
      'failed without retryable',
      '{"t":"failed","error":{"name":"E","message":"m"}}',
      /`retryable` in the "failed" outcome to be a boolean/,
    ],
    [
      'failed without error',
      '{"t":"failed","retryable":true}',
      /Expected `error` in the "failed" outcome to be a JSON object, got undefined\.$/,
    ],
    [
      'failed error without message',
      '{"t":"failed","retryable":true,"error":{"name":"E"}}',
      /`message` in `error` in the "failed" outcome to be a string/,
    ],
    [
      'failed with fractional retryAfterMs',
      '{"t":"failed","retryable":true,"error":{"name":"E","message":"m"},"retryAfterMs":1.5}',
      /`retryAfterMs` in the "failed" outcome/,
    ],
    [
      'failed step without name',
      '{"t":"failed","retryable":true,"error":{"name":"E","message":"m"},"step":{"index":0,"kind":"run","durationMs":1}}',
      /`name` in `step` in the "failed" outcome/,
    ],
    [
      'failed step without durationMs',
      '{"t":"failed","retryable":true,"error":{"name":"E","message":"m"},"step":{"index":0,"name":"a","kind":"run"}}',
      /`durationMs` in `step` in the "failed" outcome/,
    ],
  ])('%s', (_label, line, message) => {
    expect(protocolError(() => decodeOutcome(line)).message).toMatch(message);
  });

  it('names an unknown kind and lists the known ones', () => {
    const error = protocolError(() => decodeOutcome('{"t":"nap","ms":5}'));
    expect(error.message).toBe(
      'Unknown outcome kind "nap": expected started, step, done, failed, continue, suspend or cancel.',
    );
  });

  it('keeps the JSON error as the cause of a malformed line', () => {
    expect(protocolError(() => decodeOutcome('nope')).cause).toBeInstanceOf(SyntaxError);
  });
});

describe('OutcomeLineSplitter', () => {
  const lines = [
    encodeOutcome({ t: 'started', index: 0, name: 'a', kind: 'run', group: 1 }),
    encodeOutcome({ t: 'step', index: 0, name: 'a', kind: 'run', output: '"ü€😀"', durationMs: 1 }),
    encodeOutcome({ t: 'done' }),
  ];
  const bytes = encoder.encode(lines.join(''));

  it('returns whole lines from one chunk', () => {
    const splitter = new OutcomeLineSplitter();
    expect(splitter.push(bytes)).toEqual(lines.map((l) => l.trimEnd()));
    expect(splitter.end()).toBe('');
  });

  it('holds a partial line until its newline arrives', () => {
    const splitter = new OutcomeLineSplitter();
    const first = lines[0]!;
    expect(splitter.push(encoder.encode(first.slice(0, 10)))).toEqual([]);
    expect(splitter.push(encoder.encode(first.slice(10, -1)))).toEqual([]);
    expect(splitter.push(encoder.encode('\n'))).toEqual([first.trimEnd()]);
  });

  it('gives the same lines for every split of the byte stream, including inside multi-byte characters', () => {
    const multiByteStart = bytes.findIndex((b) => b >= 0x80);
    expect(multiByteStart).toBeGreaterThan(0);
    for (let cut = 1; cut < bytes.length; cut++) {
      const splitter = new OutcomeLineSplitter();
      const out = [...splitter.push(bytes.subarray(0, cut)), ...splitter.push(bytes.subarray(cut))];
      expect(out, `cut at byte ${cut}`).toEqual(lines.map((l) => l.trimEnd()));
      expect(splitter.end()).toBe('');
    }
  });

  it('decodes a stream fed one byte at a time', () => {
    const splitter = new OutcomeLineSplitter();
    const out: string[] = [];
    for (let i = 0; i < bytes.length; i++) out.push(...splitter.push(bytes.subarray(i, i + 1)));
    expect(out.map(decodeOutcome)[1]).toMatchObject({ t: 'step', output: '"ü€😀"' });
  });

  it('skips blank lines', () => {
    expect(new OutcomeLineSplitter().push(encoder.encode('\n\n{"t":"continue"}\n\n'))).toEqual(['{"t":"continue"}']);
  });

  it('reports a truncated last line from end()', () => {
    const splitter = new OutcomeLineSplitter();
    expect(splitter.push(encoder.encode('{"t":"continue"}\n{"t":"do'))).toEqual(['{"t":"continue"}']);
    expect(splitter.end()).toBe('{"t":"do');
  });
});

describe('step logs on outcome lines', () => {
  const base = { t: 'step', index: 0, name: 'a', kind: 'run', durationMs: 1 };
  const decode = (logs: unknown) => decodeOutcome(JSON.stringify({ ...base, logs }));

  it('reads lines with level, message, time and fields, and the dropped count', () => {
    const logs = { lines: [{ at: 5, level: 'warn', message: 'hm', fields: { a: 1 } }], dropped: 3 };
    expect(decode(logs)).toEqual({ ...base, logs });
    const failed = {
      t: 'failed',
      error: { name: 'Error', message: 'x' },
      retryable: true,
      step: { index: 0, name: 'a', kind: 'run', durationMs: 1, logs },
    };
    expect(decodeOutcome(JSON.stringify(failed))).toEqual(failed);
  });

  it.each([
    [{ lines: 'no' }, /Expected `lines` in `logs` in the "step" outcome to be an array, got the string "no"/],
    [
      { lines: [{ at: 1, level: 'trace', message: 'x' }] },
      /Expected `level` in `lines\[0\]` in `logs` in the "step" outcome to be one of debug, info, log, warn, error, got the string "trace"/,
    ],
    [{ lines: [{ at: 1, level: 'log', message: 2 }] }, /Expected `message` in `lines\[0\]`/],
    [
      { lines: [{ at: 1, level: 'log', message: 'x', fields: [1] }] },
      /Expected `fields` in `lines\[0\]` in `logs` in the "step" outcome to be a JSON object, got an array/,
    ],
    [{ lines: [], dropped: -1 }, /Expected `dropped` in `logs` in the "step" outcome to be an integer >= 0/],
    [
      { lines: Array.from({ length: 1001 }, () => ({ at: 1, level: 'log', message: '' })) },
      /Expected at most 1000 `lines` in `logs` in the "step" outcome, got 1001/,
    ],
  ])('refuses malformed logs, naming the field: %#', (logs, message) => {
    expect(() => decode(logs)).toThrow(message);
  });
});
