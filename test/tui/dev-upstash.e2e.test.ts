import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { requireSystemDependency } from '../setup/system-deps.js';
import { qstashToken } from '../../runner-core/qstash/qstash-token.js';

/**
 * `wf dev` on a terminal (tmux, 120×40) in an Upstash Workflow app's folder, with no app to start:
 * the dashboard's log pane still opens and lists the values such an app reads, keys included.
 */

const CLI = join(fileURLToPath(new URL('../../', import.meta.url)), 'dist', 'cli', 'index.js');
const SOCKET_DIR = mkdtempSync(join(tmpdir(), 'wf-tui-upstash-'));
const SOCKET = join(SOCKET_DIR, 'tmux.sock');
const run = promisify(execFile);
const tmux = async (...args: string[]): Promise<string> => (await run('tmux', ['-S', SOCKET, ...args])).stdout;

async function until(pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await tmux('capture-pane', '-p', '-t', 'upstash');
    if (pattern.test(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`The screen never showed ${pattern}. Last screen:\n${last}`);
}

afterAll(async () => {
  await tmux('kill-server').catch(() => {});
  rmSync(SOCKET_DIR, { recursive: true, force: true });
});

describe('wf dev on a terminal, in an Upstash Workflow app', () => {
  it('its log pane lists the values an Upstash app needs, signing keys included', async () => {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the end-to-end tests.`);
    requireSystemDependency('tmux');
    const dir = join(SOCKET_DIR, 'app');
    await run('mkdir', ['-p', dir]);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'app', dependencies: { '@upstash/workflow': '^1.3.3' } }),
    );
    const unset = [
      'CI',
      'CONTINUOUS_INTEGRATION',
      'WF_TOKEN',
      'SERVICE_TOKEN',
      'WF_RUNNER_URL',
      'QSTASH_CURRENT_SIGNING_KEY',
      'QSTASH_NEXT_SIGNING_KEY',
    ]
      .map((name) => `-u ${name}`)
      .join(' ');
    const command = `env ${unset} NO_COLOR=1 '${process.execPath}' '${CLI}' dev --port 0 --token T; echo "[wf exited $?]"; sleep 600`;
    await tmux('new-session', '-d', '-s', 'upstash', '-x', '120', '-y', '40', '-c', dir, command);
    const screen = await until(/QSTASH_CURRENT_SIGNING_KEY=sig_/);
    expect(screen).toMatch(/QSTASH_URL=http:\/\/127\.0\.0\.1:\d+/);
    expect(screen).toContain(`QSTASH_TOKEN=${qstashToken('T')}`);
    expect(screen).toMatch(/QSTASH_NEXT_SIGNING_KEY=sig_/);
    expect(screen).toContain('give them to the app; --write-upstash-env writes them into .env');
    await tmux('send-keys', '-t', 'upstash', 'q');
    await until(/\[wf exited 0\]/);
  });
});
