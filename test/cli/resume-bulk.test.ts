import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';
import {
  closeStarted,
  Counter,
  startApp,
  startTestRunner,
  waitForFinish,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/** `wf resume` and `wf bulk` against a real runner and app over real HTTP. */

let runner: TestRunner | undefined;
let app: TestApp | undefined;

afterEach(closeStarted);

/** A CliIO whose lines land in `out`; `answers` are what the user types at each confirmation (a terminal when given). */
function captureIO(answers?: string[]): { io: CliIO; out: string[]; asked: string[] } {
  const out: string[] = [];
  const asked: string[] = [];
  const io: CliIO = {
    out: (line) => void out.push(line),
    err: (line) => void out.push(line),
    env: {},
    cwd: tmpdir(),
    interrupted: () => new Promise(() => {}),
  };
  if (answers) {
    io.isTTY = true;
    io.ask = async (question) => {
      asked.push(question);
      return answers.shift() ?? '';
    };
  }
  return { io, out, asked };
}

async function wf(io: CliIO, ...args: string[]): Promise<unknown> {
  return createProgram(io)
    .exitOverride()
    .parseAsync([...args, '--runner', runner!.url, '--token', runner!.token], { from: 'user' })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
}

describe('wf bulk and wf resume', () => {
  it('refuses without a filter or a confirmation, asks on a terminal, then acts', async () => {
    runner = await startTestRunner();
    const counter = new Counter();
    app = await startApp(async (context) => context.run('only', () => counter.hit('only')), {
      token: runner.token,
      runnerUrl: runner.url,
    });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await runner.runner.startRun({ url: app.url, body: '', headers: {}, delayMs: 3_600_000 })).run.id);

    expect(await wf(captureIO().io, 'bulk', 'cancel')).toMatchObject({
      code: 'NO_FILTER',
      message: expect.stringContaining('pass --all'),
    });
    expect(await wf(captureIO().io, 'bulk', 'cancel', '--status', 'queued')).toMatchObject({
      code: 'NOT_CONFIRMED',
      message: expect.stringContaining('3 runs match'),
    });

    const declined = captureIO(['n']);
    expect(await wf(declined.io, 'bulk', 'cancel', '--status', 'queued')).toBeUndefined();
    expect(declined.asked).toEqual(['cancel 3 runs? [y/N] ']);
    expect(declined.out).toEqual(['Nothing done.']);
    for (const id of ids) expect((await runner.store.getRun(id))?.status).toBe('queued');

    const accepted = captureIO(['y']);
    expect(await wf(accepted.io, 'bulk', 'cancel', '--status', 'queued')).toBeUndefined();
    expect(accepted.out).toEqual(['cancel: 3 of 3 done']);
    for (const id of ids) expect((await runner.store.getRun(id))?.status).toBe('cancelled');

    const one = captureIO();
    expect(await wf(one.io, 'resume', ids[0]!)).toBeUndefined();
    expect(one.out).toEqual([`${ids[0]} queued`]);
    expect((await waitForFinish(runner.runner, ids[0]!)).run.status).toBe('completed');
    expect(await wf(captureIO().io, 'resume', ids[0]!)).toMatchObject({
      code: 'HTTP_409',
      message: expect.stringContaining('to be failed or cancelled'),
    });

    const rest = captureIO();
    expect(
      await wf(rest.io, 'bulk', 'resume', '--status', 'cancelled', '--since', '1h', '--url', app.url, '--yes'),
    ).toBeUndefined();
    expect(rest.out).toEqual(['resume: 2 of 2 done']);
    for (const id of ids.slice(1)) expect((await waitForFinish(runner.runner, id)).run.status).toBe('completed');
    expect(counter.of('only')).toBe(3);

    const none = captureIO();
    expect(await wf(none.io, 'bulk', 'rerun', '--until', '1h', '--yes')).toBeUndefined();
    expect(none.out).toEqual(['No runs match; nothing to rerun.']);
    expect(await wf(captureIO().io, 'bulk', 'rerun', '--since', 'yesterday-ish', '--yes')).toMatchObject({
      code: 'BAD_ARGUMENT',
      message: expect.stringContaining('got "yesterday-ish"'),
    });
  });
});
