import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unusedPort } from '../helpers/runner.js';
import { requireSystemDependency } from '../setup/system-deps.js';

/**
 * `wf dev -- node tiny-app.mjs` in a real terminal (tmux, 120×40): the dashboard shows the app's
 * output and wf dev's findings in the log pane, `l` hides and shows it, and `q` stops the app too.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli', 'index.js');
const TINY_APP = join(ROOT, 'test', 'cli', 'fixtures', 'tiny-app.mjs');
const SOCKET_DIR = mkdtempSync(join(tmpdir(), 'wf-tui-app-tmux-'));
const SOCKET = join(SOCKET_DIR, 'tmux.sock');
const SESSION = 'app';
const run = promisify(execFile);
const tmux = async (...args: string[]): Promise<string> => (await run('tmux', ['-S', SOCKET, ...args])).stdout;
const screen = (): Promise<string> => tmux('capture-pane', '-p', '-t', SESSION);

async function until(expected: RegExp | string | ((screen: string) => boolean), timeoutMs = 15_000): Promise<string> {
  const test =
    typeof expected === 'function'
      ? expected
      : (s: string): boolean => (typeof expected === 'string' ? s.includes(expected) : expected.test(s));
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await screen();
    if (test(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`The screen never showed ${String(expected)}. Last screen:\n${last}`);
}

const dirs: string[] = [SOCKET_DIR];
let port: number;
let appPid = 0;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the end-to-end tests.`);
  requireSystemDependency('tmux');
  const dir = mkdtempSync(join(tmpdir(), 'wf-tui-app-'));
  dirs.push(dir);
  port = await unusedPort();
  const unset = [
    'CI',
    'CONTINUOUS_INTEGRATION',
    'WF_TOKEN',
    'SERVICE_TOKEN',
    'WF_RUNNER_URL',
    'WF_WORKFLOW_URL',
    'PORT',
    'FORCE_COLOR',
  ]
    .map((name) => `-u ${name}`)
    .join(' ');
  const wf = `'${process.execPath}' '${CLI}' dev --port 0 --token T --app-port ${port} --route /workflow -- '${process.execPath}' '${TINY_APP}'`;
  await tmux(
    'new-session',
    '-d',
    '-s',
    SESSION,
    '-x',
    '120',
    '-y',
    '40',
    '-c',
    dir,
    `env ${unset} NO_COLOR=1 ${wf}; echo "[wf exited $?]"; sleep 600`,
  );
});

afterAll(async () => {
  await tmux('kill-server').catch(() => {});
  // Whatever happened, the app's process group goes too.
  if (appPid)
    try {
      process.kill(-appPid, 'SIGKILL');
    } catch {}
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('wf dev with an app, on a terminal', () => {
  it("shows the app's output and the probe's verdict in the log pane, with `l logs` in the footer", async () => {
    const s = await until(`wf: app ok: http://127.0.0.1:${port}/workflow (node)`);
    appPid = Number(/app pid (\d+)/.exec(s)?.[1] ?? 0);
    // No trailing ─ filler asserted: how much is left depends on the length of the checkout's path.
    expect(s).toMatch(/─ log · .*tiny-app\.mjs · \d+ lines · l hides/);
    expect(s).toContain(`app listening on http://127.0.0.1:${port}/workflow`);
    expect(s).toContain('a line on stderr');
    expect(s.trimEnd().split('\n').at(-1)).toContain('l logs · q quit');
  });

  it('a run started at the app shows in the list and its step output in the pane', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/workflow`, { method: 'POST', body: '{"text":"pane"}' });
    const id = ((await response.json()) as { workflowRunId: string }).workflowRunId;
    const s = await until(new RegExp(`✓ completed\\s+${id}`));
    await until('step ran: PANE');
    expect(s).toMatch(/STATUS\s+RUN/);
  });

  it('l hides the pane and shows it again', async () => {
    await tmux('send-keys', '-t', SESSION, 'l');
    const hidden = await until((s) => !s.includes('─ log ·'));
    expect(hidden).toMatch(/STATUS\s+RUN/);
    await tmux('send-keys', '-t', SESSION, 'l');
    await until('─ log ·');
  });

  it('q quits: the app is stopped and wf dev exits 0', async () => {
    await tmux('send-keys', '-t', SESSION, 'q');
    const s = await until('[wf exited 0]', 20_000);
    expect(s).toContain('wf dev: stopping…');
    expect(appPid).toBeGreaterThan(0);
    expect(() => process.kill(appPid, 0)).toThrow();
  });
});
