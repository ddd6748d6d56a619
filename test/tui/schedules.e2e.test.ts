import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../serve/client.js';
import { requireSystemDependency } from '../setup/system-deps.js';

/** The TUI's schedules line: `wf dev` in a tmux pane, schedules added and removed over the API. */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli', 'index.js');
const TOKEN = 'wf_tui_schedules_token';
const SOCKET_DIR = mkdtempSync(join(tmpdir(), 'wf-tui-tmux-'));
const SOCKET = join(SOCKET_DIR, 'tmux.sock');
const SESSION = 'sched';
const run = promisify(execFile);
const tmux = async (...args: string[]): Promise<string> => (await run('tmux', ['-S', SOCKET, ...args])).stdout;
const screen = (): Promise<string> => tmux('capture-pane', '-p', '-t', SESSION);

/** Polls the screen until `test` holds (bounded); returns that screen. */
async function until(test: (screen: string) => boolean, what: string, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await screen();
    if (test(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Expected the screen to show ${what}. Last screen:\n${last}`);
}

let runnerUrl: string;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the end-to-end tests.`);
  requireSystemDependency('tmux');
  const unset = [
    'CI',
    'CONTINUOUS_INTEGRATION',
    'WF_TOKEN',
    'SERVICE_TOKEN',
    'WF_RUNNER_URL',
    'NO_COLOR',
    'FORCE_COLOR',
  ]
    .map((name) => `-u ${name}`)
    .join(' ');
  const command = `env ${unset} NO_COLOR=1 '${process.execPath}' '${CLI}' dev --port 0 --token ${TOKEN}; echo "[wf exited $?]"; sleep 600`;
  await tmux('new-session', '-d', '-s', SESSION, '-x', '120', '-y', '30', '-c', SOCKET_DIR, command);
  runnerUrl = (/wf dev · (http:\/\/127\.0\.0\.1:\d+) · ● live/.exec(
    await until((s) => s.includes('● live'), 'the runner live'),
  ) ?? [])[1]!;
  expect(runnerUrl).toBeDefined();
});

afterAll(async () => {
  await tmux('kill-server').catch(() => {});
  rmSync(SOCKET_DIR, { recursive: true, force: true });
});

describe('TUI schedules line', () => {
  it('shows how many schedules there are and the next to fire, and drops the line when none are left', async () => {
    const before = await screen();
    expect(before).not.toContain(' schedule · next');
    const client = new Client({ runnerUrl, token: TOKEN });
    const daily = await client.schedules.create({
      url: 'http://127.0.0.1:9/workflow',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
    });
    const shown = await until((s) => s.includes('1 schedule · next'), 'the schedules line');
    expect(shown).toContain(`next ${daily.id.slice(0, 12)} "0 9 * * 1-5" in`);
    await client.schedules.delete(daily.id);
    await until((s) => !s.includes(' schedule · next'), 'the schedules line gone');
  });
});
