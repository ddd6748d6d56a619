import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  DeterminismError,
  NonRetryableError,
  ProtocolError,
  RetryAfterError,
  serializeError,
  WorkflowError,
} from '../../protocol/errors.js';
import { parseDriveRequest, parseStartRequest, type DriveRequest } from '../../protocol/messages.js';

function protocolMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    return (error as ProtocolError).message;
  }
  throw new Error('Expected a ProtocolError, nothing was thrown.');
}

describe('parseStartRequest', () => {
  it('fills the defaults of a minimal request', () => {
    expect(parseStartRequest({ url: 'https://app.example.com/wf' })).toEqual({
      url: 'https://app.example.com/wf',
      body: '',
      headers: {},
    });
  });

  it('keeps every field of a full request', () => {
    const full = {
      url: 'http://127.0.0.1:3000/wf',
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
      retries: 0,
      retryDelayMs: 250,
      delayMs: 1500,
      idempotencyKey: 'order-42',
    };
    expect(parseStartRequest(full)).toEqual(full);
  });

  it.each([
    ['null', null, 'Expected the start request to be a JSON object, got null.'],
    ['an array', [], 'Expected the start request to be a JSON object, got an array.'],
    ['no url', {}, 'Expected `url` in the start request to be a string, got undefined.'],
    [
      'a relative url',
      { url: '/wf' },
      'Expected `url` in the start request to be an absolute URL, got the string "/wf".',
    ],
    [
      'a non-http url',
      { url: 'ftp://x/wf' },
      'Expected `url` in the start request to be an http(s) URL, got the string "ftp://x/wf".',
    ],
    [
      'a numeric body',
      { url: 'https://a/wf', body: 1 },
      'Expected `body` in the start request to be a string, got number 1.',
    ],
    [
      'headers as an array',
      { url: 'https://a/wf', headers: [] },
      'Expected `headers` in the start request to be a JSON object, got an array.',
    ],
    [
      'a non-string header',
      { url: 'https://a/wf', headers: { 'x-n': 5 } },
      'Expected `headers.x-n` in the start request to be a string, got number 5.',
    ],
    [
      'negative retries',
      { url: 'https://a/wf', retries: -1 },
      'Expected `retries` in the start request to be an integer >= 0, got number -1.',
    ],
    [
      'fractional retryDelayMs',
      { url: 'https://a/wf', retryDelayMs: 1.5 },
      'Expected `retryDelayMs` in the start request to be an integer >= 0, got number 1.5.',
    ],
    [
      'a numeric idempotencyKey',
      { url: 'https://a/wf', idempotencyKey: 7 },
      'Expected `idempotencyKey` in the start request to be a string, got number 7.',
    ],
  ])('rejects %s', (_label, input, message) => {
    expect(protocolMessage(() => parseStartRequest(input))).toBe(message);
  });
});

describe('parseDriveRequest', () => {
  const good: DriveRequest = {
    v: 1,
    runId: 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B',
    body: '{"text":"hi"}',
    headers: { 'content-type': 'application/json' },
    steps: [
      { index: 0, name: 'a', kind: 'run', output: '"A"' },
      { index: 1, name: 'b', kind: 'run' },
    ],
    attempt: 2,
  };

  it('accepts inline steps', () => {
    expect(parseDriveRequest(JSON.parse(JSON.stringify(good)))).toEqual(good);
  });

  it('accepts a step that failed for good, and the failure of a failed run', () => {
    const failed: DriveRequest = {
      ...good,
      steps: [
        { index: 0, name: 'a', kind: 'call', error: { name: 'HttpError', message: 'responded 500', code: 'X' } },
        { index: 1, name: 'b', kind: 'run', pending: true },
      ],
      failure: {
        error: { name: 'NonRetryableError', message: 'no' },
        failedStep: { index: 0, name: 'a', kind: 'call' },
      },
    };
    expect(parseDriveRequest(JSON.parse(JSON.stringify(failed)))).toEqual(failed);
  });

  it('accepts steps: null (to be fetched) and an empty list', () => {
    expect(parseDriveRequest({ ...good, steps: null }).steps).toBeNull();
    expect(parseDriveRequest({ ...good, steps: [] }).steps).toEqual([]);
  });

  it.each([
    ['a string', 'hi', /^Expected the drive request to be a JSON object, got the string "hi"\.$/],
    [
      'another protocol version',
      { ...good, v: 2 },
      /^Expected protocol version 1 in the drive request, got 2: update wfkit/,
    ],
    [
      'no version',
      { ...good, v: undefined },
      /^Expected `v` in the drive request to be an integer >= 1, got undefined\.$/,
    ],
    ['no runId', { ...good, runId: undefined }, /^Expected `runId` in the drive request to be a string/],
    ['no body', { ...good, body: undefined }, /^Expected `body` in the drive request to be a string/],
    ['no headers', { ...good, headers: undefined }, /^Expected `headers` in the drive request to be a JSON object/],
    ['no steps', { ...good, steps: undefined }, /^Expected `steps` in the drive request to be an array of steps\.$/],
    [
      'attempt 0',
      { ...good, attempt: 0 },
      /^Expected `attempt` in the drive request to be an integer >= 1, got number 0\.$/,
    ],
    [
      'a step that is not an object',
      { ...good, steps: ['a'] },
      /`steps` in the drive request\[0\] to be a JSON object/,
    ],
    [
      'a step without a name',
      { ...good, steps: [{ index: 0, kind: 'run' }] },
      /^Expected `name` in `steps` in the drive request\[0\] to be a string/,
    ],
    [
      'an unknown step kind',
      { ...good, steps: [{ index: 0, name: 'a', kind: 'nap' }] },
      /^Expected `kind` in `steps` in the drive request\[0\] to be one of run, sleep, wait, call, invoke, got "nap"\.$/,
    ],
    [
      'a step error without a message',
      { ...good, steps: [{ index: 0, name: 'a', kind: 'run', error: { name: 'E' } }] },
      /`message` in `error` in `steps` in the drive request\[0\] to be a string/,
    ],
    [
      'a step with a string pending',
      { ...good, steps: [{ index: 0, name: 'a', kind: 'run', pending: 'yes' }] },
      /`pending` in `steps` in the drive request\[0\] to be a boolean/,
    ],
    [
      'a numeric step output',
      { ...good, steps: [{ index: 0, name: 'a', kind: 'run', output: 1 }] },
      /`output` in `steps` in the drive request\[0\] to be a string/,
    ],
    [
      'steps out of order',
      { ...good, steps: [{ index: 1, name: 'a', kind: 'run' }] },
      /`steps` in the drive request\[0\]\.index to be 0, got 1\.$/,
    ],
  ])('rejects %s', (_label, input, message) => {
    expect(protocolMessage(() => parseDriveRequest(input))).toMatch(message);
  });
});

describe('WorkflowError.is', () => {
  it('recognizes every wfkit error class', () => {
    for (const error of [
      new WorkflowError('CONFIG', 'x'),
      new NonRetryableError('x'),
      new RetryAfterError('x', 1),
      new ProtocolError('x'),
      new DeterminismError('x'),
    ]) {
      expect(WorkflowError.is(error)).toBe(true);
    }
  });

  it('recognizes an error from another copy of the package (structural brand, not instanceof)', () => {
    class CopiedWorkflowError extends Error {
      readonly code = 'NON_RETRYABLE';
      get [Symbol.for('wfkit.error')](): true {
        return true;
      }
    }
    const copy = new CopiedWorkflowError('from another bundle');
    expect(copy instanceof WorkflowError).toBe(false);
    expect(WorkflowError.is(copy)).toBe(true);
    expect(
      WorkflowError.is({
        get [Symbol.for('wfkit.error')]() {
          return true;
        },
      }),
    ).toBe(true);
  });

  it.each([
    ['a plain Error', new Error('x')],
    ['null', null],
    ['a string', 'WorkflowError'],
    ['a look-alike without the brand', { name: 'WorkflowError', code: 'CONFIG', message: 'x' }],
    ['a brand that is not true', { [Symbol.for('wfkit.error')]: 'yes' }],
  ])('rejects %s', (_label, value) => {
    expect(WorkflowError.is(value)).toBe(false);
  });

  it('keeps code, name and cause', () => {
    const cause = new Error('root');
    const error = new NonRetryableError('card declined', { cause });
    expect(error).toMatchObject({ name: 'NonRetryableError', code: 'NON_RETRYABLE', message: 'card declined', cause });
    expect(error).toBeInstanceOf(WorkflowError);
  });
});

describe('serializeError', () => {
  it('keeps name, message, stack and a string code of an Error', () => {
    const error = Object.assign(new TypeError('bad'), { code: 'E_BAD' });
    expect(serializeError(error)).toEqual({ name: 'TypeError', message: 'bad', stack: error.stack, code: 'E_BAD' });
    expect(serializeError(new ProtocolError('p'))).toMatchObject({ name: 'ProtocolError', code: 'PROTOCOL' });
  });

  it('drops a code that is not a string', () => {
    expect(serializeError(Object.assign(new Error('x'), { code: 42 }))).not.toHaveProperty('code');
  });

  it.each([
    ['a string', 'boom', 'Non-error was thrown: "boom"'],
    ['an object', { reason: 'nope' }, 'Non-error was thrown: {"reason":"nope"}'],
    ['a number', 42, 'Non-error was thrown: 42'],
    ['undefined', undefined, 'Non-error was thrown: undefined'],
    ['a bigint', 10n, 'Non-error was thrown: 10'],
  ])('wraps %s', (_label, value, message) => {
    expect(serializeError(value)).toEqual({ name: 'Error', message });
  });

  it('wraps a circular object without throwing', () => {
    const circular: Record<string, unknown> = { a: 1 };
    circular.self = circular;
    expect(serializeError(circular)).toEqual({ name: 'Error', message: 'Non-error was thrown: [object Object]' });
  });
});

describe('RetryAfterError', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('takes a delay in milliseconds, rounded and never negative', () => {
    expect(new RetryAfterError('x', 1500).retryAfterMs).toBe(1500);
    expect(new RetryAfterError('x', 1500.4).retryAfterMs).toBe(1500);
    expect(new RetryAfterError('x', -5).retryAfterMs).toBe(0);
    expect(new RetryAfterError('x', 0)).toMatchObject({ code: 'RETRY_AFTER', name: 'RetryAfterError' });
  });

  it('takes a Date, measured from now', () => {
    vi.useFakeTimers({ now: new Date('2025-01-01T00:00:00Z') });
    expect(new RetryAfterError('x', new Date('2025-01-01T00:00:30Z')).retryAfterMs).toBe(30_000);
    expect(new RetryAfterError('x', new Date('2024-12-31T23:59:00Z')).retryAfterMs).toBe(0);
  });

  it.each([NaN, Infinity, new Date('not a date')])('rejects %s', (value) => {
    expect(() => new RetryAfterError('x', value)).toThrow(
      /Expected `retryAfter` to be a number of milliseconds or a Date/,
    );
  });
});
