import { describe, expect, it, vi } from 'vitest';
import { StepFailedError, WorkflowError } from '../../protocol/errors.js';
import type { StepRecord } from '../../protocol/messages.js';
import { isTerminal, type Outcome, type Suspension } from '../../protocol/outcome.js';
import { decodeValue, encodeValue } from '../../protocol/values.js';
import { createContext, type WorkflowContext } from '../../serve/core/context.js';
import { DriveSession } from '../../serve/core/session.js';
import { committedStep } from '../helpers/drive.js';

/**
 * The context API beyond `run`, on the session alone: what each call streams, what a replay
 * answers from records, and the checks that stop a run. Wall clock and timer clock are injected.
 */

const NOW = 1_700_000_000_000;

type Failed = Extract<Outcome, { t: 'failed' }>;
type Suspend = Extract<Outcome, { t: 'suspend' }>;

/** Drives `workflow` with a real context over one session; resolves with every line once closed. */
function drive(
  workflow: (context: WorkflowContext) => unknown,
  committed: StepRecord[] = [],
): { lines: Outcome[]; closed: Promise<Outcome[]> } {
  const lines: Outcome[] = [];
  let resolveClosed!: () => void;
  const whenClosed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closes = 0;
  const session = new DriveSession({
    committed,
    timeBudgetMs: 10_000,
    clock: () => NOW,
    emit: (outcome) => {
      expect(closes, `emitted ${JSON.stringify(outcome)} after close`).toBe(0);
      lines.push(outcome);
    },
    close: () => {
      closes++;
      resolveClosed();
    },
  });
  const context = createContext(
    {
      workflowRunId: 'wfr_TEST',
      requestPayload: undefined,
      headers: {},
      env: {},
      url: 'http://app.test/wf',
      trace: undefined,
    },
    session,
  );
  Promise.resolve()
    .then(() => workflow(context))
    .then(
      (value) => session.finish(value),
      (error: unknown) => session.fail(error),
    );
  const closed = whenClosed.then(() => {
    expect(closes).toBe(1);
    expect(lines.filter(isTerminal)).toHaveLength(1);
    expect(isTerminal(lines.at(-1)!)).toBe(true);
    return lines;
  });
  return { lines, closed };
}

const record = (index: number, name: string, kind: StepRecord['kind'], value?: unknown): StepRecord => {
  const step: StepRecord = { index, name, kind };
  const output = encodeValue(value, name);
  if (output !== undefined) step.output = output;
  return step;
};

const suspended = (lines: Outcome[]): Suspension[] => {
  expect(lines.at(-1)?.t).toBe('suspend');
  return (lines.at(-1) as Suspend).steps;
};

const failure = (lines: Outcome[]): Failed => {
  expect(lines.at(-1)?.t).toBe('failed');
  return lines.at(-1) as Failed;
};

describe('context.sleep and sleepUntil', () => {
  it.each([
    ['a number of seconds', 0.3, 300],
    ['"1s"', '1s', 1000],
    ['"500ms"', '500ms', 500],
    ['"2m"', '2m', 120_000],
  ])('sleep for %s suspends until now + the duration', async (_label, duration, ms) => {
    const after = vi.fn();
    const lines = await drive(async (context) => {
      await context.sleep('nap', duration);
      after();
    }).closed;
    expect(after).not.toHaveBeenCalled();
    // The position is recorded at once (`started`), the description with the terminal `suspend`.
    expect(lines).toEqual([
      { t: 'started', index: 0, name: 'nap', kind: 'sleep', group: 1 },
      { t: 'suspend', steps: [{ kind: 'sleep', index: 0, name: 'nap', group: 1, until: NOW + ms }] },
    ]);
  });

  it.each([
    ['a Date', new Date(NOW + 5000)],
    ['epoch milliseconds', NOW + 5000],
    ['a date string', new Date(NOW + 5000).toISOString()],
  ])('sleepUntil takes %s', async (_label, time) => {
    const lines = await drive((context) => context.sleepUntil('until', time)).closed;
    expect(suspended(lines)).toEqual([{ kind: 'sleep', index: 0, name: 'until', group: 1, until: NOW + 5000 }]);
  });

  it('a recorded sleep answers undefined on replay and the workflow goes on', async () => {
    const lines = await drive(
      async (context) => {
        const slept = await context.sleep('nap', '1h');
        return context.run('after', () => ({ slept }));
      },
      [record(0, 'nap', 'sleep')],
    ).closed;
    expect(lines.map((l) => l.t)).toEqual(['started', 'step', 'done']);
    expect(decodeValue((lines.at(-1) as { output?: string }).output)).toEqual({ slept: undefined });
  });

  it.each([
    ['a negative duration', (c: WorkflowContext) => c.sleep('bad', -1), /duration of sleep "bad".*got -1/],
    ['an unreadable duration', (c: WorkflowContext) => c.sleep('bad', 'soon'), /duration of sleep "bad".*got "soon"/],
    [
      'an unreadable date',
      (c: WorkflowContext) => c.sleepUntil('bad', 'not a date'),
      /time of sleepUntil "bad".*got "not a date"/,
    ],
  ])('fails the run, not retryable, on %s', async (_label, workflow, message) => {
    const { error, retryable } = failure(await drive(workflow).closed);
    expect(retryable).toBe(false);
    expect(error).toMatchObject({ code: 'CONFIG' });
    expect(error.message).toMatch(message);
  });
});

describe('context.call', () => {
  it('hands the request to the runner: method upper-cased, a JSON body with its content type, timeout in ms', async () => {
    const lines = await drive((context) =>
      context.call('charge', {
        url: 'https://api.test/charge?x=1',
        method: 'post',
        headers: { 'x-trace': 't-1' },
        body: { amount: 5 },
        timeout: 2,
        retries: 1,
        throwHttpErrors: true,
      }),
    ).closed;
    expect(suspended(lines)).toEqual([
      {
        kind: 'call',
        index: 0,
        name: 'charge',
        group: 1,
        request: {
          url: 'https://api.test/charge?x=1',
          method: 'POST',
          headers: { 'x-trace': 't-1', 'content-type': 'application/json' },
          body: '{"amount":5}',
          timeoutMs: 2000,
          retries: 1,
          throwHttpErrors: true,
        },
      },
    ]);
  });

  it('defaults to GET without a body, sends a string body as is and keeps a given content type', async () => {
    const lines = await drive((context) =>
      Promise.all([
        context.call('get', { url: 'https://api.test/a' }),
        context.call('text', {
          url: 'https://api.test/b',
          method: 'PUT',
          body: 'raw',
          headers: { 'Content-Type': 'text/plain' },
        }),
        context.call('typed', {
          url: 'https://api.test/c',
          method: 'POST',
          body: [1],
          headers: { 'Content-Type': 'application/vnd.x+json' },
        }),
      ]),
    ).closed;
    expect(suspended(lines).map((s) => (s.kind === 'call' ? s.request : null))).toEqual([
      { url: 'https://api.test/a', method: 'GET', headers: {} },
      { url: 'https://api.test/b', method: 'PUT', headers: { 'Content-Type': 'text/plain' }, body: 'raw' },
      { url: 'https://api.test/c', method: 'POST', headers: { 'Content-Type': 'application/vnd.x+json' }, body: '[1]' },
    ]);
  });

  it('a recorded call answers its response on replay', async () => {
    const response = { status: 201, headers: { 'content-type': 'application/json' }, body: { id: 7 } };
    const lines = await drive(
      (context) => context.call('charge', { url: 'https://api.test/charge' }),
      [record(0, 'charge', 'call', response)],
    ).closed;
    expect(lines).toHaveLength(1);
    expect(decodeValue((lines[0] as { output?: string }).output)).toEqual(response);
  });

  it.each([
    ['a relative url', { url: '/charge' }, /`url` of call "c" to be an absolute URL, got "\/charge"/],
    [
      'negative retries',
      { url: 'https://api.test', retries: -1 },
      /`retries` of call "c" to be a non-negative integer, got -1/,
    ],
    ['an unreadable timeout', { url: 'https://api.test', timeout: 'later' }, /`timeout` of call "c"/],
  ])('fails the run, not retryable, on %s', async (_label, options, message) => {
    const { error, retryable } = failure(await drive((context) => context.call('c', options)).closed);
    expect(retryable).toBe(false);
    expect(error.message).toMatch(message);
  });
});

describe('context.waitForEvent', () => {
  it('suspends on the event id until the timeout (default 7 days)', async () => {
    const lines = await drive((context) =>
      Promise.all([
        context.waitForEvent('approval', 'order-1', { timeout: '10m' }),
        context.waitForEvent('forever', 'order-2'),
      ]),
    ).closed;
    expect(suspended(lines)).toEqual([
      { kind: 'wait', index: 0, name: 'approval', group: 1, eventId: 'order-1', until: NOW + 600_000 },
      { kind: 'wait', index: 1, name: 'forever', group: 1, eventId: 'order-2', until: NOW + 7 * 24 * 3_600_000 },
    ]);
  });

  it('a recorded wait answers the event data, or the timeout, on replay', async () => {
    const lines = await drive(
      async (context) => [await context.waitForEvent('a', 'e1'), await context.waitForEvent('b', 'e2')],
      [
        record(0, 'a', 'wait', { eventData: { ok: true }, timeout: false }),
        record(1, 'b', 'wait', { eventData: undefined, timeout: true }),
      ],
    ).closed;
    expect(decodeValue((lines.at(-1) as { output?: string }).output)).toEqual([
      { eventData: { ok: true }, timeout: false },
      { eventData: undefined, timeout: true },
    ]);
  });

  it('fails the run on an empty event id', async () => {
    const { error, retryable } = failure(await drive((context) => context.waitForEvent('w', '')).closed);
    expect(retryable).toBe(false);
    expect(error.message).toContain('event id of waitForEvent "w"');
  });
});

describe('parallel groups', () => {
  it('steps started without an await between them share a group; later steps get the next one', async () => {
    const lines = await drive(async (context) => {
      await Promise.all([context.run('a', () => 1), context.run('b', async () => 2)]);
      await context.run('c', () => 3);
    }).closed;
    const started = lines.filter((l): l is Extract<Outcome, { t: 'started' }> => l.t === 'started');
    expect(started.map((s) => [s.name, s.index, s.group])).toEqual([
      ['a', 0, 1],
      ['b', 1, 1],
      ['c', 2, 2],
    ]);
  });

  it('suspends only once the steps running beside a sleep have finished and streamed', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const driven = drive((context) =>
      Promise.all([context.run('a', () => held.then(() => 'A')), context.sleep('c', 1)]),
    );
    await vi.waitFor(() => expect(driven.lines.map((l) => l.t)).toEqual(['started', 'started']));
    // A macrotask passes (the suspend check's timer) while "a" still runs: no terminal line yet.
    await new Promise((resolve) => setImmediate(resolve));
    expect(driven.lines.some(isTerminal)).toBe(false);
    release();
    const lines = await driven.closed;
    expect(lines.map((l) => ('name' in l ? `${l.t}:${l.name}` : l.t))).toEqual([
      'started:a',
      'started:c',
      'step:a',
      'suspend',
    ]);
    expect(suspended(lines)).toEqual([{ kind: 'sleep', index: 1, name: 'c', group: 1, until: NOW + 1000 }]);
  });

  it('hands a sleep, a wait and a call started together to the runner in one suspend (Promise.race included)', async () => {
    const lines = await drive((context) =>
      Promise.race([
        context.sleep('s', 1),
        context.waitForEvent('w', 'e', { timeout: 5 }),
        context.call('c', { url: 'https://api.test' }),
      ]),
    ).closed;
    expect(suspended(lines).map((s) => [s.kind, s.index, s.group])).toEqual([
      ['sleep', 0, 1],
      ['wait', 1, 1],
      ['call', 2, 1],
    ]);
  });
});

describe('a step that failed for good', () => {
  const error = {
    name: 'TypeError',
    message: 'card declined',
    stack: 'TypeError: card declined\n    at charge (app.ts:1:1)',
    code: 'X',
  };
  const failed: StepRecord = { index: 0, name: 'charge', kind: 'run', error };

  it('rethrows into the workflow on replay as StepFailedError with the original name, message and stack', async () => {
    let caught: unknown;
    const fn = vi.fn();
    const lines = await drive(
      async (context) => {
        try {
          await context.run('charge', fn);
        } catch (e) {
          caught = e;
        }
        return context.run('refund', () => 'refunded');
      },
      [failed],
    ).closed;
    expect(fn).not.toHaveBeenCalled();
    expect(caught).toBeInstanceOf(StepFailedError);
    expect(caught).toMatchObject({
      name: 'TypeError',
      message: 'card declined',
      stack: error.stack,
      code: 'STEP_FAILED',
      step: 'charge',
    });
    expect(WorkflowError.is(caught)).toBe(true);
    expect(lines.map((l) => ('name' in l ? `${l.t}:${l.name}` : l.t))).toEqual([
      'started:refund',
      'step:refund',
      'done',
    ]);
  });

  it('fails the run, not retryable, when the workflow does not catch it', async () => {
    const {
      error: thrown,
      retryable,
      step,
    } = failure(await drive((context) => context.run('charge', () => 1), [failed]).closed);
    expect(retryable).toBe(false);
    expect(step).toBeUndefined();
    expect(thrown).toMatchObject({
      name: 'TypeError',
      message: 'card declined',
      code: 'STEP_FAILED',
      stack: error.stack,
    });
  });

  it('rethrows a failed call the same way', async () => {
    const call: StepRecord = {
      index: 0,
      name: 'api',
      kind: 'call',
      error: { name: 'HttpError', message: 'responded 500' },
    };
    const lines = await drive(
      async (context) => {
        try {
          await context.call('api', { url: 'https://api.test' });
          return 'no error';
        } catch (e) {
          return (e as Error).message;
        }
      },
      [call],
    ).closed;
    expect(decodeValue((lines[0] as { output?: string }).output)).toBe('responded 500');
  });
});

describe('a pending record (a position without a result yet, before finished ones)', () => {
  it('runs or suspends that position again, and answers the later positions from their records', async () => {
    const fns = { flaky: vi.fn(() => 'F'), steady: vi.fn(() => 'S') };
    const lines = await drive(
      async (context) => {
        const [flaky, steady] = await Promise.all([context.run('flaky', fns.flaky), context.run('steady', fns.steady)]);
        const winner = await Promise.race([
          context.sleep('timer', 1).then(() => 'timer'),
          context.waitForEvent('reply', 'e').then(() => 'reply'),
        ]);
        return `${flaky}${steady}-${winner}`;
      },
      [
        { index: 0, name: 'flaky', kind: 'run', pending: true },
        record(1, 'steady', 'run', 'S'),
        record(2, 'timer', 'sleep'),
        { index: 3, name: 'reply', kind: 'wait', pending: true },
      ],
    ).closed;
    expect(fns.flaky).toHaveBeenCalledTimes(1);
    expect(fns.steady).not.toHaveBeenCalled();
    expect(lines.map((l) => ('name' in l ? `${l.t}:${l.name}` : l.t))).toEqual(['started:flaky', 'step:flaky', 'done']);
    expect(decodeValue((lines.at(-1) as { output?: string }).output)).toBe('FS-timer');
  });

  it('suspends a pending wait again when the workflow cannot go on without it', async () => {
    const lines = await drive(
      (context) => context.waitForEvent('reply', 'e', { timeout: 5 }),
      [{ index: 0, name: 'reply', kind: 'wait', pending: true }],
    ).closed;
    expect(suspended(lines)).toEqual([
      { kind: 'wait', index: 0, name: 'reply', group: 1, eventId: 'e', until: NOW + 5000 },
    ]);
  });

  it('still checks the name and kind at a pending position', async () => {
    const { error } = failure(
      await drive(
        (context) => context.run('renamed', () => 1),
        [{ index: 0, name: 'original', kind: 'run', pending: true }],
      ).closed,
    );
    expect(error.code).toBe('DETERMINISM');
  });
});

describe('kind checks, cancel and nesting', () => {
  it('a different kind at a recorded position is a determinism error naming both', async () => {
    const { error } = failure(
      await drive((context) => context.run('nap', () => 1), [record(0, 'nap', 'sleep')]).closed,
    );
    expect(error).toMatchObject({ name: 'DeterminismError', code: 'DETERMINISM' });
    expect(error.message).toContain('recorded as sleep "nap" but the workflow now asks for run "nap"');
  });

  it('cancel() ends the response with cancel; nothing after it runs', async () => {
    const after = vi.fn();
    const lines = await drive(async (context) => {
      await context.run('a', () => 1);
      await context.cancel();
      await context.run('after', after);
    }).closed;
    expect(after).not.toHaveBeenCalled();
    expect(lines.map((l) => l.t)).toEqual(['started', 'step', 'cancel']);
  });

  it('cancel() inside a step fails the run instead', async () => {
    const { error, retryable } = failure(await drive((context) => context.run('outer', () => context.cancel())).closed);
    expect(retryable).toBe(false);
    expect(error).toMatchObject({ code: 'NESTED_STEP' });
    expect(error.message).toContain('context.cancel() was called inside step "outer"');
  });

  it.each<[string, (c: WorkflowContext) => Promise<unknown>]>([
    ['run', (c) => c.run('inner', () => 1)],
    ['sleep', (c) => c.sleep('inner', 1)],
  ])('a %s started inside a step fails the run, naming both steps', async (_kind, inner) => {
    const lines = await drive((context) => context.run('outer', () => inner(context))).closed;
    const { error, retryable } = failure(lines);
    expect(retryable).toBe(false);
    expect(error).toMatchObject({ code: 'NESTED_STEP' });
    expect(error.message).toContain('Step "inner" was started inside step "outer"');
  });
});

describe('per-step options', () => {
  it("a failing step carries its own retries and retryDelay for the runner's policy", async () => {
    const { step } = failure(
      await drive((context) => context.run('s', () => Promise.reject(new Error('x')), { retries: 2, retryDelay: '2s' }))
        .closed,
    );
    expect(step).toMatchObject({ name: 's', retries: 2, retryDelayMs: 2000 });
    const plain = failure(
      await drive((context) => context.run('s', () => Promise.reject(new Error('x')), { retryDelay: 25 })).closed,
    );
    expect(plain.step).toMatchObject({ retryDelayMs: 25 });
    expect(plain.step).not.toHaveProperty('retries');
  });

  it('a step over its timeout fails, retryable, with a message naming the step and the timeout', async () => {
    const { error, retryable, step } = failure(
      await drive((context) => context.run('slow', () => new Promise(() => {}), { timeout: '50ms' })).closed,
    );
    expect(retryable).toBe(true);
    expect(error).toMatchObject({ code: 'TIMEOUT', message: 'Step "slow" took longer than its timeout of 50 ms.' });
    expect(step).toMatchObject({ name: 'slow' });
  });

  it('an unreadable step option fails the run before the step runs', async () => {
    const fn = vi.fn();
    const { error, retryable } = failure(
      await drive((context) => context.run('s', fn, { timeout: 'eventually' })).closed,
    );
    expect(fn).not.toHaveBeenCalled();
    expect(retryable).toBe(false);
    expect(error.message).toContain('`timeout` of step "s"');
  });
});

describe('values', () => {
  it('streams a Date, Map, Set or BigInt result encoded, and replays the record as equal values', async () => {
    const value = { d: new Date(0), m: new Map([[1, 'a']]), s: new Set([1]), b: 10n };
    const lines = await drive((context) => context.run('v', () => value)).closed;
    expect(decodeValue((lines[1] as { output?: string }).output)).toEqual(value);
    const replay = await drive((context) => context.run('v', () => 'not called'), [committedStep(0, 'v', value)])
      .closed;
    expect(decodeValue((replay[0] as { output?: string }).output)).toEqual(value);
  });

  it.each([
    ['a function', () => () => 1, /step "v": a function cannot be serialized/],
    ['a class instance', () => new (class Invoice {})(), /step "v": an instance of Invoice cannot be serialized/],
    [
      'a nested class instance',
      () => ({ list: [new (class Money {})()] }),
      /step "v": an instance of Money at `\.list\[0\]` cannot be serialized/,
    ],
  ])('fails a step returning %s, not retryable, naming the step and the type', async (_label, fn, message) => {
    const { error, retryable, step } = failure(await drive((context) => context.run('v', fn)).closed);
    expect(retryable).toBe(false);
    expect(step).toMatchObject({ name: 'v' });
    expect(error.code).toBe('SERIALIZATION');
    expect(error.message).toMatch(message);
  });
});

describe('context.invoke', () => {
  it('suspends with the child start request: url resolved against the workflow, JSON body, headers, retries', async () => {
    const after = vi.fn();
    const lines = await drive(async (context) => {
      await context.invoke('child', { url: '/child', body: { id: 7 }, headers: { 'x-trace': 't1' }, retries: 2 });
      after();
    }).closed;
    expect(lines[0]).toEqual({ t: 'started', index: 0, name: 'child', kind: 'invoke', group: 1 });
    expect(suspended(lines)).toEqual([
      {
        kind: 'invoke',
        index: 0,
        name: 'child',
        group: 1,
        request: {
          url: 'http://app.test/child',
          body: '{"id":7}',
          headers: { 'x-trace': 't1', 'content-type': 'application/json' },
          retries: 2,
        },
      },
    ]);
    expect(after).not.toHaveBeenCalled();
  });

  it("resolves the child's flow control against its body when invoked: the suspension carries key and limits", async () => {
    const lines = await drive(async (context) => {
      await context.invoke('child', {
        url: '/child',
        body: { tenant: 't9' },
        flowControl: {
          key: (payload: { tenant: string }) => `tenant-${payload.tenant}`,
          parallelism: 1,
          rate: 5,
          period: '2s',
        },
      });
    }).closed;
    expect(suspended(lines)).toEqual([
      {
        kind: 'invoke',
        index: 0,
        name: 'child',
        group: 1,
        request: {
          url: 'http://app.test/child',
          body: '{"tenant":"t9"}',
          headers: { 'content-type': 'application/json' },
          flowControl: { key: 'tenant-t9', parallelism: 1, rate: 5, periodMs: 2000 },
        },
      },
    ]);
  });

  it('a recorded invoke answers the child result on replay, and the workflow goes on', async () => {
    const result = { body: { total: 3 }, isFailed: false, isCanceled: false };
    const lines = await drive(
      async (context) => {
        const { body } = await context.invoke<{ total: number }>('child', { url: 'https://other.test/wf' });
        return body.total + 1;
      },
      [record(0, 'child', 'invoke', result)],
    ).closed;
    expect(lines).toEqual([{ t: 'done', output: encodeValue(4, 'out') }]);
  });

  it('fails with a determinism error when the recorded position holds another kind or name', async () => {
    const asCall = failure(
      await drive(
        (context) => context.invoke('child', { url: 'https://other.test/wf' }),
        [record(0, 'child', 'call', {})],
      ).closed,
    );
    expect(asCall.error.name).toBe('DeterminismError');
    expect(asCall.error.message).toContain('recorded as call "child" but the workflow now asks for invoke "child"');
    const renamed = failure(
      await drive(
        (context) => context.invoke('kid', { url: 'https://other.test/wf' }),
        [record(0, 'child', 'invoke', {})],
      ).closed,
    );
    expect(renamed.error.message).toContain('recorded as invoke "child" but the workflow now asks for invoke "kid"');
  });

  it.each([
    ['no options', undefined, /options of invoke "c" to be an object with a `url`/],
    ['an unreadable url', { url: 'http://[bad' }, /`url` of invoke "c" to be a URL/],
    ['negative retries', { url: '/c', retries: -1 }, /`retries` of invoke "c" to be a non-negative integer, got -1/],
    [
      'flow control without a limit',
      { url: '/c', flowControl: { key: 'k' } },
      /`flowControl` of invoke "c" to be valid flow control: .*`parallelism` or `rate`/,
    ],
    [
      'an empty flow control key',
      { url: '/c', body: {}, flowControl: { key: () => '', parallelism: 1 } },
      /`flowControl` of invoke "c" to be valid flow control: .*non-empty string/,
    ],
  ])('fails the run, not retryable, on %s', async (_label, options, message) => {
    const { error, retryable } = failure(await drive((context) => context.invoke('c', options as never)).closed);
    expect(retryable).toBe(false);
    expect(error.message).toMatch(message);
  });
});
