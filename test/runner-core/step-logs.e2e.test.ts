import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '../../api/client.js';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';
import { closeStarted, startApp, startTestRunner, startThroughApp, waitForFinish } from '../helpers/runner.js';

/**
 * Step logs end to end: the real `serve` handler on node:http captures what steps print, the real
 * runner stores it per step and attempt in a real SQLite file, the API serves it, and `wf logs
 * --step` prints it.
 */

afterEach(closeStarted);

// Spied before any step runs, so the route's capture (installed once, at the first step) forwards
// to these: the test sees the app's own output still happen, and the terminal stays quiet.
const printed = Object.fromEntries(
  (['log', 'info', 'warn', 'error', 'debug'] as const).map((level) => [
    level,
    vi.spyOn(console, level).mockImplementation(() => {}),
  ]),
) as Record<'log' | 'info' | 'warn' | 'error' | 'debug', ReturnType<typeof vi.spyOn>>;
afterAll(() => vi.restoreAllMocks());

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 2));

function captureIO(): { io: CliIO; out: string[] } {
  const out: string[] = [];
  const io: CliIO = {
    out: (line) => void out.push(line),
    err: (line) => void out.push(line),
    env: {},
    cwd: process.cwd(),
    interrupted: () => new Promise(() => {}),
  };
  return { io, out };
}

async function wf(...args: string[]): Promise<string[]> {
  const { io, out } = captureIO();
  await createProgram(io).exitOverride().parseAsync(args, { from: 'user' });
  return out;
}

describe('step logs end to end', () => {
  it('keeps what each step printed per attempt (a failed one too), serves it and prints it with wf logs --step', async () => {
    const runner = await startTestRunner();
    let tries = 0;
    const app = await startApp(
      async (context) => {
        await context.run('quiet', () => 1);
        await context.run('charge', async () => {
          tries++;
          console.log(`charging, try ${tries}`);
          await tick();
          context.log('info', 'card checked', { last4: '4242', try: tries });
          if (tries === 1) {
            console.error('gateway said no');
            throw new Error('gateway timeout');
          }
          console.warn('charged');
          return 'ok';
        });
        await Promise.all(
          ['left', 'right'].map((side) =>
            context.run(side, async () => {
              for (let i = 0; i < 2; i++) {
                console.info(`${side} ${i}`);
                await tick();
              }
            }),
          ),
        );
      },
      { token: runner.token, runnerUrl: runner.url, retryDelay: 10 },
    );
    const id = await startThroughApp(app.url, {});
    const { run } = await waitForFinish(runner.runner, id);
    expect(run.status).toBe('completed');

    const detail = await new Client({ runnerUrl: runner.url, token: runner.token }).get(id);
    const summary = detail.logs.map((log) => [
      log.name,
      log.attempt,
      log.status,
      log.lines.map((l) => `${l.level}:${l.message}`),
    ]);
    const charge = detail.logs.filter((log) => log.name === 'charge');
    expect(charge.map((log) => log.status)).toEqual(['failed', 'succeeded']);
    expect(charge[0]!.attempt).toBeLessThan(charge[1]!.attempt);
    expect(summary).toEqual([
      ['charge', charge[0]!.attempt, 'failed', ['log:charging, try 1', 'info:card checked', 'error:gateway said no']],
      ['charge', charge[1]!.attempt, 'succeeded', ['log:charging, try 2', 'info:card checked', 'warn:charged']],
      ['left', charge[1]!.attempt, 'succeeded', ['info:left 0', 'info:left 1']],
      ['right', charge[1]!.attempt, 'succeeded', ['info:right 0', 'info:right 1']],
    ]);
    expect(charge[1]!.lines[1]!.fields).toEqual({ last4: '4242', try: 2 });
    expect(printed.warn).toHaveBeenCalledWith('charged');
    expect(printed.info).toHaveBeenCalledWith('card checked', { last4: '4242', try: 2 });
    // The failed attempt is in the attempt log with the seq its lines are kept under.
    const failedAttempt = detail.attempts.find((a) => a.seq === charge[0]!.attempt);
    expect(failedAttempt?.outcome).toBe('failed');
    expect(failedAttempt?.error?.message).toContain('gateway timeout');

    const text = await wf('logs', id, '--step', 'charge', '--runner', runner.url, '--token', runner.token);
    expect(text[0]).toBe('step 1 charge · succeeded · run');
    expect(text).toContain(`◆ attempt ${charge[0]!.attempt} · failed · 3 lines`);
    expect(text).toContain(`◆ attempt ${charge[1]!.attempt} · succeeded · 3 lines`);
    expect(text.some((line) => /^ {2}\d\d:\d\d:\d\d\.\d{3} info {2}card checked last4="4242" try=2$/.test(line))).toBe(
      true,
    );
    expect(text.some((line) => /^ {2}\d\d:\d\d:\d\d\.\d{3} error gateway said no$/.test(line))).toBe(true);

    expect(await wf('logs', id, '--step', '0', '--runner', runner.url, '--token', runner.token)).toEqual([
      'step 0 quiet · succeeded · run',
      '  (printed nothing)',
    ]);
    // The run's story ends with which steps printed, and how to read it.
    const story = await wf('logs', id, '--runner', runner.url, '--token', runner.token);
    expect(story.at(-1)).toBe(
      `steps that printed: 1 charge (6 lines), 2 left (2 lines), 3 right (2 lines) · wf logs ${id} --step <index|name>`,
    );
    const json = await wf('logs', id, '--step', 'left', '--json', '--runner', runner.url, '--token', runner.token);
    expect(json.map((line) => (JSON.parse(line) as { name: string }).name)).toEqual(['left']);
    await expect(wf('logs', id, '--step', 'nope', '--runner', runner.url, '--token', runner.token)).rejects.toThrow(
      /Expected --step to name a step of the run \(an index or a name\), got "nope": its steps are 0 "quiet", 1 "charge", 2 "left", 3 "right"\./,
    );
  });

  it('bounds a step that prints in a loop, and the run still completes', async () => {
    const runner = await startTestRunner();
    const app = await startApp(
      async (context) => {
        await context.run('chatty', () => {
          for (let i = 0; i < 5_000; i++) console.debug(`line ${i} ${'·'.repeat(40)}`);
          return 'done';
        });
      },
      { token: runner.token, runnerUrl: runner.url },
    );
    const id = await startThroughApp(app.url, {});
    const { run } = await waitForFinish(runner.runner, id);
    expect(run.status).toBe('completed');
    const [log] = await runner.store.listStepLogs(id);
    expect(log!.lines.length).toBe(1_000);
    expect(log!.dropped).toBe(4_000);
    const text = await wf('logs', id, '--step', 'chatty', '--runner', runner.url, '--token', runner.token);
    expect(text.at(-1)).toBe('  … 4000 more lines not kept (a step keeps 1,000 lines, 64 KiB)');
  });
});
