import { describe, expect, it, vi } from 'vitest';
import { NonRetryableError, RetryAfterError } from '../../protocol/errors.js';
import type { StepRecord } from '../../protocol/messages.js';
import { isTerminal, type Outcome } from '../../protocol/outcome.js';
import { decodeValue, encodeValue } from '../../protocol/values.js';
import { DriveSession } from '../../serve/core/session.js';
import { committedStep } from '../helpers/drive.js';

type Run = DriveSession['run'];

interface Driven {
  lines: Outcome[];
  closes: () => number;
  /** Resolves with every line once `close` was called, after checking the stream's invariants. */
  closed: Promise<Outcome[]>;
}

/** A macrotask turn: lets every pending promise reaction run (not a timed sleep). */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Drives `workflow` the way drive.ts does, recording lines and close calls. */
function drive(
  workflow: (run: Run) => unknown,
  options: {
    committed?: StepRecord[];
    timeBudgetMs?: number;
    now?: () => number;
    clock?: () => number;
    deadline?: number;
  } = {},
): Driven {
  const lines: Outcome[] = [];
  let closes = 0;
  const whenClosed = deferred();
  const session = new DriveSession({
    committed: options.committed ?? [],
    timeBudgetMs: options.timeBudgetMs ?? 10_000,
    ...(options.now ? { now: options.now } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
    emit: (outcome) => {
      expect(closes, `emitted ${JSON.stringify(outcome)} after close`).toBe(0);
      lines.push(outcome);
    },
    close: () => {
      closes++;
      whenClosed.resolve();
    },
  });
  const run: Run = (name, fn) => session.run(name, fn);
  Promise.resolve()
    .then(() => workflow(run))
    .then(
      (value) => session.finish(value),
      (error: unknown) => session.fail(error),
    );
  const closed = whenClosed.promise.then(async () => {
    await turn();
    expect(closes).toBe(1);
    expect(lines.filter(isTerminal)).toHaveLength(1);
    expect(isTerminal(lines.at(-1)!)).toBe(true);
    return lines;
  });
  return { lines, closes: () => closes, closed };
}

const kinds = (lines: Outcome[]): string[] => lines.map((l) => ('name' in l ? `${l.t}:${l.name}` : l.t));

describe('DriveSession replay', () => {
  it('answers committed steps from their records without calling fn, then runs the next step', async () => {
    const a = vi.fn(() => 'A');
    const b = vi.fn(() => ({ n: 1 }));
    const lines = await drive(
      async (run) => {
        const first = await run('a', a);
        const second = await run('b', b);
        return run('c', () => `${first}${second.n}`);
      },
      { committed: [committedStep(0, 'a', 'A'), committedStep(1, 'b', { n: 1 })] },
    ).closed;
    expect(a).not.toHaveBeenCalled();
    expect(b).not.toHaveBeenCalled();
    expect(lines).toEqual([
      { t: 'started', index: 2, name: 'c', kind: 'run', group: 3 },
      { t: 'step', index: 2, name: 'c', kind: 'run', output: encodeValue('A1', 'c'), durationMs: expect.any(Number) },
      { t: 'done', output: encodeValue('A1', 'c') },
    ]);
  });

  it('replays a step whose result was undefined', async () => {
    const lines = await drive(async (run) => [await run('log', () => {})], { committed: [committedStep(0, 'log')] })
      .closed;
    expect(lines).toHaveLength(1);
    expect(lines[0]?.t).toBe('done');
    // devalue keeps undefined inside an array (JSON would have made it null).
    expect(decodeValue((lines[0] as Extract<Outcome, { t: 'done' }>).output)).toEqual([undefined]);
  });

  it('stops with a determinism error naming both steps before any new step runs', async () => {
    const next = vi.fn(() => 1);
    const lines = await drive(
      async (run) => {
        await run('load-user', () => 0);
        await run('send-email', next);
      },
      { committed: [committedStep(0, 'load-user', 0), committedStep(1, 'charge-card', 1)] },
    ).closed;
    expect(next).not.toHaveBeenCalled();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      t: 'failed',
      retryable: false,
      error: { name: 'DeterminismError', code: 'DETERMINISM' },
    });
    const message = (lines[0] as Extract<Outcome, { t: 'failed' }>).error.message;
    expect(message).toContain('Step 1 is recorded as run "charge-card"');
    expect(message).toContain('asks for run "send-email"');
  });

  it('fails when the workflow returns with fewer steps than recorded', async () => {
    const lines = await drive(async (run) => run('a', () => 1), {
      committed: [committedStep(0, 'a', 1), committedStep(1, 'b', 2)],
    }).closed;
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ t: 'failed', retryable: false, error: { code: 'DETERMINISM' } });
    expect((lines[0] as Extract<Outcome, { t: 'failed' }>).error.message).toContain(
      'returned after 1 steps, but 2 are recorded (next: run "b")',
    );
  });
});

describe('DriveSession new steps', () => {
  it('runs sync and async fns back to back, each streamed as started then step', async () => {
    const lines = await drive(async (run) => {
      const a = await run('sync', () => 1);
      const b = await run('async', async () => a + 1);
      const c = await run('promise', () => Promise.resolve(b * 10));
      await run('nothing', () => undefined);
      return { a, b, c };
    }).closed;
    expect(kinds(lines)).toEqual([
      'started:sync',
      'step:sync',
      'started:async',
      'step:async',
      'started:promise',
      'step:promise',
      'started:nothing',
      'step:nothing',
      'done',
    ]);
    expect(
      lines.filter((l) => l.t === 'step').map((l) => decodeValue((l as Extract<Outcome, { t: 'step' }>).output)),
    ).toEqual([1, 2, 20, undefined]);
    expect(lines.filter((l) => l.t === 'step').at(-1)).not.toHaveProperty('output');
    expect(lines.at(-1)?.t).toBe('done');
    expect(decodeValue((lines.at(-1) as Extract<Outcome, { t: 'done' }>).output)).toEqual({ a: 1, b: 2, c: 20 });
  });

  it('ends with done without output when the workflow returns nothing', async () => {
    expect(await drive(() => undefined).closed).toEqual([{ t: 'done' }]);
  });

  it('fails a throwing step with its step info, retryable', async () => {
    const after = vi.fn();
    const lines = await drive(async (run) => {
      await run('ok', () => 'fine');
      await run('boom', () => {
        throw new TypeError('kaput');
      });
      await run('after', after);
    }).closed;
    expect(after).not.toHaveBeenCalled();
    expect(kinds(lines)).toEqual(['started:ok', 'step:ok', 'started:boom', 'failed']);
    expect(lines.at(-1)).toEqual({
      t: 'failed',
      retryable: true,
      error: { name: 'TypeError', message: 'kaput', stack: expect.stringContaining('kaput') },
      step: { index: 1, name: 'boom', kind: 'run', durationMs: expect.any(Number) },
    });
  });

  it('fails a rejecting async step the same way', async () => {
    const lines = await drive((run) => run('reject', async () => Promise.reject(new Error('no')))).closed;
    expect(lines.at(-1)).toMatchObject({
      t: 'failed',
      retryable: true,
      error: { message: 'no' },
      step: { index: 0, name: 'reject' },
    });
  });

  it('marks NonRetryableError as not retryable', async () => {
    const lines = await drive((run) =>
      run('pay', () => {
        throw new NonRetryableError('card declined');
      }),
    ).closed;
    expect(lines.at(-1)).toMatchObject({
      t: 'failed',
      retryable: false,
      error: { name: 'NonRetryableError', code: 'NON_RETRYABLE' },
      step: { name: 'pay' },
    });
  });

  it('passes the delay of a RetryAfterError', async () => {
    const lines = await drive((run) =>
      run('api', async () => {
        throw new RetryAfterError('rate limited', 2500);
      }),
    ).closed;
    expect(lines.at(-1)).toMatchObject({
      t: 'failed',
      retryable: true,
      retryAfterMs: 2500,
      error: { code: 'RETRY_AFTER' },
    });
  });

  it('fails a step whose result cannot be serialized, not retryable', async () => {
    const lines = await drive((run) => run('fn', () => () => 1)).closed;
    expect(lines.at(-1)).toMatchObject({
      t: 'failed',
      retryable: false,
      error: { code: 'SERIALIZATION' },
      step: { name: 'fn' },
    });
    expect((lines.at(-1) as Extract<Outcome, { t: 'failed' }>).error.message).toContain('step "fn"');
    expect((lines.at(-1) as Extract<Outcome, { t: 'failed' }>).error.message).toContain('a function');
  });

  it('fails a workflow that throws outside any step, without step info', async () => {
    const lines = await drive(async (run) => {
      await run('a', () => 1);
      throw 'plain string';
    }).closed;
    expect(lines.at(-1)).toEqual({
      t: 'failed',
      retryable: true,
      error: { name: 'Error', message: 'Non-error was thrown: "plain string"' },
    });
  });

  it('refuses an empty step name', async () => {
    const lines = await drive((run) => run('', () => 1)).closed;
    expect(lines).toEqual([
      {
        t: 'failed',
        retryable: false,
        error: expect.objectContaining({ message: expect.stringContaining('Expected a step name') }),
      },
    ]);
  });
});

describe('DriveSession halting', () => {
  it('hands back with continue once the time budget is spent, without calling the next fn', async () => {
    let clock = 0;
    const second = vi.fn(() => 2);
    const lines = await drive(
      async (run) => {
        await run('first', () => {
          clock += 1001;
          return 1;
        });
        await run('second', second);
      },
      { timeBudgetMs: 1000, now: () => clock },
    ).closed;
    expect(second).not.toHaveBeenCalled();
    expect(lines).toEqual([
      { t: 'started', index: 0, name: 'first', kind: 'run', group: 1 },
      { t: 'step', index: 0, name: 'first', kind: 'run', output: encodeValue(1, 'first'), durationMs: 1001 },
      { t: 'continue' },
    ]);
  });

  it('starts no new step once the wall clock passes the signed deadline, replay included', async () => {
    let wall = 1_000;
    const later = vi.fn(() => 3);
    const lines = await drive(
      async (run) => {
        await run('old', () => 0);
        await run('new', () => {
          wall = 2_001;
          return 1;
        });
        await run('later', later);
      },
      { clock: () => wall, deadline: 2_000, committed: [committedStep(0, 'old', 0)] },
    ).closed;
    expect(later).not.toHaveBeenCalled();
    expect(kinds(lines)).toEqual(['started:new', 'step:new', 'continue']);
  });

  it('starts not even the first new step after the deadline, but replays what is committed', async () => {
    const first = vi.fn(() => 1);
    const lines = await drive(
      async (run) => {
        expect(await run('old', () => 'not run')).toBe(0);
        await run('first', first);
      },
      { clock: () => 5_000, deadline: 4_999, committed: [committedStep(0, 'old', 0)] },
    ).closed;
    expect(first).not.toHaveBeenCalled();
    expect(lines).toEqual([{ t: 'continue' }]);
  });

  it('runs every step up to the deadline itself', async () => {
    const lines = await drive(
      async (run) => {
        await run('a', () => 1);
        await run('b', () => 2);
      },
      { clock: () => 2_000, deadline: 2_000 },
    ).closed;
    expect(kinds(lines)).toEqual(['started:a', 'step:a', 'started:b', 'step:b', 'done']);
  });

  it('always runs at least one new step, even when replay used up the budget', async () => {
    let clock = 0;
    const lines = await drive(
      async (run) => {
        await run('old', () => 0);
        clock = 5000;
        await run('new', () => 1);
        await run('later', () => 2);
      },
      { timeBudgetMs: 1000, now: () => clock, committed: [committedStep(0, 'old', 0)] },
    ).closed;
    expect(kinds(lines)).toEqual(['started:new', 'step:new', 'continue']);
  });

  it('is not swallowed by a try/catch around a failing context.run', async () => {
    let caught = false;
    const after = vi.fn();
    const lines = await drive(async (run) => {
      try {
        await run('flaky', () => {
          throw new Error('down');
        });
      } catch {
        caught = true;
      }
      await run('after-catch', after);
    }).closed;
    expect(caught).toBe(false);
    expect(after).not.toHaveBeenCalled();
    expect(kinds(lines)).toEqual(['started:flaky', 'failed']);
    expect(lines.at(-1)).toMatchObject({ step: { name: 'flaky' } });
  });

  it('is not swallowed by a try/catch around a step that hits a determinism error', async () => {
    const after = vi.fn();
    const lines = await drive(
      async (run) => {
        try {
          await run('renamed', () => 0);
        } catch {
          // the workflow would carry on here if the stop were a thrown error
        }
        await run('after-catch', after);
      },
      { committed: [committedStep(0, 'original', 0)] },
    ).closed;
    expect(after).not.toHaveBeenCalled();
    expect(lines).toEqual([expect.objectContaining({ t: 'failed', retryable: false })]);
  });

  it('waits for steps in flight before the terminal line, and streams their results', async () => {
    const slow = deferred<string>();
    const driven = drive(async (run) => {
      await Promise.all([
        run('slow', () => slow.promise),
        run('fails', async () => {
          throw new Error('fast failure');
        }),
      ]);
    });
    await vi.waitFor(() => expect(kinds(driven.lines)).toEqual(['started:slow', 'started:fails']));
    await turn();
    expect(driven.closes()).toBe(0);
    expect(driven.lines.some(isTerminal)).toBe(false);
    slow.resolve('done at last');
    const lines = await driven.closed;
    expect(kinds(lines)).toEqual(['started:slow', 'started:fails', 'step:slow', 'failed']);
    expect(lines.at(-1)).toMatchObject({ step: { index: 1, name: 'fails' } });
  });

  it('ignores a late finish or fail after the terminal line', async () => {
    const lines: Outcome[] = [];
    const close = vi.fn();
    const session = new DriveSession({ committed: [], timeBudgetMs: 1000, emit: (o) => lines.push(o), close });
    session.finish('first');
    session.fail(new Error('late'));
    session.finish('again');
    expect(lines).toEqual([{ t: 'done', output: encodeValue('first', 'the workflow') }]);
    expect(close).toHaveBeenCalledTimes(1);
    const never = vi.fn();
    void session.run('after-end', never);
    await turn();
    expect(never).not.toHaveBeenCalled();
    expect(lines).toHaveLength(1);
  });
});
