import { afterAll, describe, expect, it, vi } from 'vitest';
import { decodeOutcome, encodeOutcome, isTerminal, type Outcome } from '../../protocol/outcome.js';
import { STEP_LOG_LIMITS } from '../../protocol/step-logs.js';
import { DriveSession } from '../../serve/core/session.js';
import { formatArgs, StepLogBuffer } from '../../serve/core/step-logs.js';

// Spied before the first step runs, so the capture (installed once, lazily) forwards to these:
// the test sees that the app's own console output still happens, and the terminal stays quiet.
const printed = {
  log: vi.spyOn(console, 'log').mockImplementation(() => {}),
  info: vi.spyOn(console, 'info').mockImplementation(() => {}),
  warn: vi.spyOn(console, 'warn').mockImplementation(() => {}),
  error: vi.spyOn(console, 'error').mockImplementation(() => {}),
  debug: vi.spyOn(console, 'debug').mockImplementation(() => {}),
};
afterAll(() => vi.restoreAllMocks());

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));
const CLOCK = 1_700_000_000_000;

/** Drives a workflow through one session; resolves with its lines once the terminal line is out. */
function drive(workflow: (session: DriveSession) => unknown): Promise<Outcome[]> {
  const lines: Outcome[] = [];
  return new Promise((resolve) => {
    const session = new DriveSession({
      committed: [],
      timeBudgetMs: 10_000,
      clock: () => CLOCK,
      emit: (outcome) => lines.push(outcome),
      close: () => resolve(lines),
    });
    Promise.resolve()
      .then(() => workflow(session))
      .then(
        (value) => session.finish(value),
        (error: unknown) => session.fail(error),
      );
  });
}

const stepLine = (lines: Outcome[], name: string) =>
  lines.find((l): l is Extract<Outcome, { t: 'step' }> => l.t === 'step' && l.name === name);

describe('step logs in the session', () => {
  it('keeps every console level and context.log (with fields) inside a step, through awaits, and still prints them', async () => {
    const lines = await drive(async (s) => {
      await s.run('charge', async () => {
        console.log('charging', 42, { card: 'visa' });
        await tick();
        console.info('info line');
        console.warn('careful');
        await tick();
        console.error(new Error('boom'));
        console.debug('details');
        s.log('info', 'charged', { amount: 42, currency: 'EUR' });
        return 'ok';
      });
    });
    const step = stepLine(lines, 'charge')!;
    expect(step.logs?.lines.map((l) => [l.level, l.message.split('\n')[0]])).toEqual([
      ['log', 'charging 42 {"card":"visa"}'],
      ['info', 'info line'],
      ['warn', 'careful'],
      ['error', 'Error: boom'],
      ['debug', 'details'],
      ['info', 'charged'],
    ]);
    expect(step.logs?.lines.at(-1)?.fields).toEqual({ amount: 42, currency: 'EUR' });
    expect(step.logs?.lines.every((l) => l.at === CLOCK)).toBe(true);
    expect(step.logs?.dropped).toBeUndefined();
    expect(printed.log).toHaveBeenCalledWith('charging', 42, { card: 'visa' });
    expect(printed.warn).toHaveBeenCalledWith('careful');
    // context.log prints once, through the console as it was (not captured a second time).
    expect(printed.info).toHaveBeenCalledWith('charged', { amount: 42, currency: 'EUR' });
    // The line survives the wire both ways.
    expect(decodeOutcome(encodeOutcome(step).trim())).toEqual(step);
  });

  it('parallel steps keep their own lines, however their awaits interleave', async () => {
    const lines = await drive(async (s) => {
      await Promise.all(
        ['a', 'b', 'c'].map((name) =>
          s.run(name, async () => {
            for (let i = 0; i < 3; i++) {
              console.log(`${name}${i}`);
              await tick();
              s.log('debug', `${name}-ctx${i}`);
            }
          }),
        ),
      );
    });
    for (const name of ['a', 'b', 'c']) {
      expect(stepLine(lines, name)?.logs?.lines.map((l) => l.message)).toEqual([
        `${name}0`,
        `${name}-ctx0`,
        `${name}1`,
        `${name}-ctx1`,
        `${name}2`,
        `${name}-ctx2`,
      ]);
    }
  });

  it('a quiet step sends no logs field, and output outside any step is not kept', async () => {
    const lines = await drive(async (s) => {
      console.log('outside');
      s.log('warn', 'outside too');
      await s.run('quiet', () => 1);
    });
    const step = stepLine(lines, 'quiet')!;
    expect('logs' in step).toBe(false);
    expect(encodeOutcome(step)).not.toContain('logs');
    expect(printed.warn).toHaveBeenCalledWith('outside too');
  });

  it('context.log from the workflow function is not kept with a step in flight (AsyncLocalStorage knows it is outside)', async () => {
    const lines = await drive(async (s) => {
      const slow = s.run('slow', async () => {
        await tick();
        s.log('info', 'inside');
      });
      s.log('info', 'from the workflow');
      await slow;
    });
    expect(stepLine(lines, 'slow')?.logs?.lines.map((l) => l.message)).toEqual(['inside']);
  });

  it('a failed step keeps what it printed on the failed line', async () => {
    const lines = await drive(async (s) => {
      await s.run('flaky', async () => {
        console.log('about to fail');
        await tick();
        throw new Error('nope');
      });
    });
    const failed = lines.find(isTerminal) as Extract<Outcome, { t: 'failed' }>;
    expect(failed.t).toBe('failed');
    expect(failed.step?.logs?.lines.map((l) => l.message)).toEqual(['about to fail']);
    expect(decodeOutcome(encodeOutcome(failed).trim())).toEqual(failed);
  });

  it('is bounded per step: extra lines are counted as dropped, a huge line is cut with a marker', async () => {
    const lines = await drive(async (s) => {
      await s.run('loop', () => {
        for (let i = 0; i < STEP_LOG_LIMITS.maxLines + 250; i++) console.log(`line ${i}`);
      });
      await s.run('huge', () => {
        console.log('x'.repeat(STEP_LOG_LIMITS.maxChars + 10));
        console.log('after the cut');
      });
    });
    const loop = stepLine(lines, 'loop')!.logs!;
    expect(loop.lines).toHaveLength(STEP_LOG_LIMITS.maxLines);
    expect(loop.dropped).toBe(250);
    const huge = stepLine(lines, 'huge')!.logs!;
    expect(huge.lines).toHaveLength(1);
    expect(huge.lines[0]!.message).toMatch(/^x+… \[10 more characters not kept\]$/);
    expect(huge.dropped).toBe(1);
    // What the route sends stays within the bound the runner accepts.
    expect(decodeOutcome(encodeOutcome(stepLine(lines, 'loop')!).trim())).toBeTruthy();
  });

  it('never fails the step: lines after it ended, unserializable fields and odd levels are harmless', async () => {
    let late: (() => void) | undefined;
    const lines = await drive(async (s) => {
      await s.run('odd', () => {
        const cyclic: Record<string, unknown> = { big: 10n };
        cyclic.self = cyclic;
        s.log('nonsense' as never, 'odd level', cyclic);
        console.log(cyclic, () => {}, Symbol('s'));
        late = () => console.log('too late');
        return 'fine';
      });
    });
    late?.();
    const step = stepLine(lines, 'odd')!;
    expect(step.output).toBeDefined();
    expect(step.logs?.lines.map((l) => l.level)).toEqual(['log', 'log']);
    expect(step.logs!.lines[0]!.fields).toEqual({ big: '10n', self: '[Circular]' });
    expect(step.logs!.lines[1]!.message).toBe('{"big":"10n","self":"[Circular]"} [Function (anonymous)] Symbol(s)');
    expect(step.logs?.lines).toHaveLength(2);
  });
});

describe('StepLogBuffer', () => {
  it('is empty (undefined on the wire) until something is added, ignores lines after seal and lets go of its lines', () => {
    const buffer = new StepLogBuffer(() => 5);
    buffer.add('info', 'one');
    expect(buffer.seal()).toEqual({ lines: [{ at: 5, level: 'info', message: 'one' }] });
    buffer.add('info', 'two');
    // Sealed once: later lines are ignored and the buffer holds nothing more.
    expect(buffer.seal()).toBeUndefined();
    expect(new StepLogBuffer().seal()).toBeUndefined();
  });

  it('formats console arguments like a terminal line', () => {
    expect(formatArgs(['a', 1, true, null, undefined, { b: [1] }])).toBe('a 1 true null undefined {"b":[1]}');
  });
});
