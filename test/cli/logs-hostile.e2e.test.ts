import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';
import { hasRawControl, HOSTILE } from '../helpers/hostile-text.js';
import { closeStarted, startApp, startTestRunner, startThroughApp, waitForFinish } from '../helpers/runner.js';

/**
 * Finding 4 of issue 19: a step that prints terminal escapes (clipboard writes, clear-screen,
 * titles, links, C1 controls, bidi overrides, bare CR), in its messages and in its `context.log`
 * field keys, a step name and an error: `wf logs` shows them as visible escapes, never raw; `--json`
 * stays JSON (whose escaping suffices) and keeps the exact text.
 */

afterEach(closeStarted);
const quiet = (['log', 'info', 'warn', 'error', 'debug'] as const).map((level) =>
  vi.spyOn(console, level).mockImplementation(() => {}),
);
afterAll(() => {
  for (const spy of quiet) spy.mockRestore();
});

async function wf(...args: string[]): Promise<string[]> {
  const out: string[] = [];
  const io: CliIO = {
    out: (line) => void out.push(line),
    err: (line) => void out.push(line),
    env: {},
    cwd: process.cwd(),
    interrupted: () => new Promise(() => {}),
  };
  await createProgram(io).exitOverride().parseAsync(args, { from: 'user' });
  return out;
}

const STEP = 'hostile\u001b]0;title\u0007';

describe('wf logs with hostile step output', () => {
  it('prints every control character a step printed as a visible escape, in text modes only', async () => {
    const runner = await startTestRunner();
    const app = await startApp(
      async (context) => {
        await context.run(STEP, () => {
          for (const { text } of HOSTILE) console.log(`line ${text}`);
          context.log('info', 'fields', Object.fromEntries(HOSTILE.map(({ text }, i) => [`key${i}${text}`, text])));
          return 'ok';
        });
        await context.run('fails', () => {
          throw new Error(`boom \u001b[2J\u009b\u202e`);
        });
      },
      { token: runner.token, runnerUrl: runner.url, retries: 0 },
    );
    const id = await startThroughApp(app.url, {});
    const { run } = await waitForFinish(runner.runner, id);
    expect(run.status).toBe('failed');
    const target = ['--runner', runner.url, '--token', runner.token];

    const step = await wf('logs', id, '--step', '0', ...target);
    for (const line of step) expect(hasRawControl(line), JSON.stringify(line)).toBe(false);
    const printed = step.join('\n');
    for (const { name, shown } of HOSTILE) expect(printed, name).toContain(`line ${shown}`);
    // The field keys too: each key's hostile part shown escaped.
    for (const [i, { shown }] of HOSTILE.entries()) expect(printed).toContain(`key${i}${shown}=`);
    expect(step[0]).toBe('step 0 hostile\\x1b]0;title\\a · succeeded · run');

    const story = await wf('logs', id, ...target);
    for (const line of story) expect(hasRawControl(line), JSON.stringify(line)).toBe(false);
    expect(story.join('\n')).toContain('boom \\x1b[2J\\x9b\\u202e');

    // JSON: the exact text, its controls escaped by JSON itself.
    const json = await wf('logs', id, '--step', '0', '--json', ...target);
    for (const line of json) expect(line).not.toMatch(/[\u0000-\u001f]/);
    const lines = (JSON.parse(json[0]!) as { lines: { message: string }[] }).lines.map((l) => l.message);
    expect(lines).toEqual(expect.arrayContaining(HOSTILE.map(({ text }) => `line ${text}`.replace(/\r\n/g, '\n'))));
  });
});
