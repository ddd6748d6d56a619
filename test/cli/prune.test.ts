import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIO } from '../../cli/lib/io.js';
import { parseRetention } from '../../cli/lib/retention-flag.js';
import { createProgram } from '../../cli/program.js';
import { closeStarted, startApp, startTestRunner, waitForFinish, type TestRunner } from '../helpers/runner.js';

/** `wf prune` against a real runner over real HTTP, and the `--retention` flag of `wf start` / `wf dev`. */

let runner: TestRunner | undefined;

afterEach(closeStarted);

function captureIO(): { io: CliIO; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: {
      out: (line) => void out.push(line),
      err: (line) => void err.push(line),
      env: {},
      cwd: tmpdir(),
      interrupted: () => new Promise(() => {}),
    },
    out,
    err,
  };
}

async function wf(io: CliIO, ...args: string[]): Promise<unknown> {
  const target = runner ? ['--runner', runner.url, '--token', runner.token] : [];
  return createProgram(io)
    .exitOverride()
    .parseAsync([...args, ...target], { from: 'user' })
    .then(
      () => undefined,
      (error: unknown) => error,
    );
}

describe('wf prune', () => {
  it('counts on --dry-run and deletes nothing, then prunes only what finished long enough ago', async () => {
    runner = await startTestRunner();
    const app = await startApp(async (context) => context.run('only', () => 'done'), {
      token: runner.token,
      runnerUrl: runner.url,
    });
    const later = (await runner.runner.startRun({ url: app.url, body: '', headers: {}, delayMs: 3_600_000 })).run.id;
    const done: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { run } = await runner.runner.startRun({ url: app.url, body: '', headers: {} });
      await waitForFinish(runner.runner, run.id);
      done.push(run.id);
    }

    const dry = captureIO();
    expect(await wf(dry.io, 'prune', '--older-than', '0', '--dry-run')).toBeUndefined();
    expect(dry.out).toEqual([
      'Would prune 3 runs (3 steps, 3 attempts, 0 step logs, 0 QStash messages, 0 QStash waits); nothing was deleted (--dry-run).',
    ]);
    for (const id of done) expect((await runner.store.listAttempts(id)).length).toBe(1);

    const recent = captureIO();
    expect(await wf(recent.io, 'prune', '--older-than', '1h')).toBeUndefined();
    expect(recent.out).toEqual([
      'Pruned 0 runs (0 steps, 0 attempts, 0 step logs, 0 QStash messages, 0 QStash waits).',
    ]);

    const all = captureIO();
    expect(await wf(all.io, 'prune', '--older-than', '0')).toBeUndefined();
    expect(all.out).toEqual(['Pruned 3 runs (3 steps, 3 attempts, 0 step logs, 0 QStash messages, 0 QStash waits).']);
    for (const id of done) expect(await runner.store.getRun(id)).toBeUndefined();
    expect((await runner.store.getRun(later))?.status).toBe('queued');
  });

  it('needs --older-than, and says what it expected of a bad one', async () => {
    runner = undefined;
    expect(await wf(captureIO().io, 'prune')).toMatchObject({ code: 'commander.missingMandatoryOptionValue' });
    const bad = captureIO();
    expect(await wf(bad.io, 'prune', '--older-than', '30')).toMatchObject({ code: 'commander.invalidArgument' });
    expect(bad.err.join('\n')).toContain(
      'Expected --older-than to be a duration with its unit, like 30d, 12h or 90m (or 0 to prune every finished run), got "30".',
    );
    const help = captureIO();
    await wf(help.io, 'prune', '--help');
    for (const flag of ['--older-than <duration>', '--dry-run', '--runner <url>', '--token <token>'])
      expect(help.out.join('\n')).toContain(flag);
  });
});

describe('--retention', () => {
  it('reads a duration with its unit, or 0 for forever, and refuses anything else naming what it expected', () => {
    expect(parseRetention('30d')).toBe(30 * 86_400_000);
    expect(parseRetention('12h')).toBe(12 * 3_600_000);
    expect(parseRetention('0')).toBe(0);
    expect(() => parseRetention('30')).toThrow(
      'Expected --retention to be a duration with its unit, like 30d, 12h or 90m (or 0 to keep finished runs forever), got "30".',
    );
    expect(() => parseRetention('soon')).toThrow(/got "soon"/);
    expect(() => parseRetention('-1d')).toThrow(/got "-1d"/);
  });

  it('defaults to 30 days on wf start and 7 on wf dev', async () => {
    runner = undefined;
    for (const [command, shown] of [
      ['start', '30d'],
      ['dev', '7d'],
    ] as const) {
      const help = captureIO();
      await wf(help.io, command, '--help');
      expect(help.out.join('\n')).toMatch(new RegExp(`--retention <duration>[^]*?\\(default: ${shown}\\)`));
    }
  });
});
