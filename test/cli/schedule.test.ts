import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { CliError } from '../../cli/errors.js';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';
import { TEST_TOKEN, startTestRunner, type TestRunner } from '../helpers/runner.js';

/** `wf schedule add|list|rm` against a real runner over real HTTP. */

let runner: TestRunner | undefined;
afterEach(async () => {
  await runner?.close();
  runner = undefined;
});

async function wf(...args: string[]): Promise<string[]> {
  const out: string[] = [];
  const io: CliIO = {
    out: (line) => void out.push(line),
    err: () => {},
    env: {},
    cwd: tmpdir(),
    interrupted: () => new Promise(() => {}),
  };
  await createProgram(io)
    .exitOverride()
    .parseAsync([...args, '--runner', runner!.url, '--token', TEST_TOKEN], { from: 'user' });
  return out;
}

describe('wf schedule', () => {
  it('adds, lists and removes a schedule; a bad cron is a one-line error naming the field', async () => {
    runner = await startTestRunner({ api: { openOnLoopback: false } });
    const [added] = await wf(
      'schedule',
      'add',
      'http://127.0.0.1:9/wf',
      '--cron',
      '0 9 * * 1-5',
      '--data',
      '{"report":"daily"}',
      '--timezone',
      'Europe/Paris',
    );
    const id = added!.split(' ')[0]!;
    expect(id).toMatch(/^wfs_/);
    expect(added).toContain('Europe/Paris  "0 9 * * 1-5"  http://127.0.0.1:9/wf');
    expect(added).toContain('last never');
    const [stored] = await runner.store.schedules.listSchedules();
    expect(stored).toMatchObject({ id, body: '{"report":"daily"}' });

    const listed = await wf('schedule', 'list');
    expect(listed).toEqual([added]);
    expect(JSON.parse((await wf('schedule', 'list', '--json'))[0]!)).toMatchObject({ id, cron: '0 9 * * 1-5' });

    const bad = await wf('schedule', 'add', 'http://127.0.0.1:9/wf', '--cron', 'not a cron').catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(CliError);
    expect((bad as Error).message).toContain('`cron`');

    expect(await wf('schedule', 'rm', id)).toEqual([`${id} deleted`]);
    expect(await wf('schedule', 'list')).toEqual(['no schedules']);
    expect(await wf('schedule', 'rm', id).catch((e: unknown) => e)).toBeInstanceOf(CliError);
  });
});
