import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  findMissing,
  installCommand,
  missingMessage,
  neededBy,
  requireSystemDependency,
  SYSTEM_DEPENDENCIES,
  SYSTEM_ROOT_ENV,
} from './system-deps.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EMPTY_ROOT = mkdtempSync(join(tmpdir(), 'wfkit-empty-system-'));
afterAll(() => rmSync(EMPTY_ROOT, { recursive: true, force: true }));

/** Runs `fn` with the lookups pointed at `root` and CHROMIUM_PATH unset. */
function withRoot<T>(root: string, fn: () => T): T {
  const saved = { root: process.env[SYSTEM_ROOT_ENV], chromium: process.env.CHROMIUM_PATH };
  process.env[SYSTEM_ROOT_ENV] = root;
  delete process.env.CHROMIUM_PATH;
  try {
    return fn();
  } finally {
    if (saved.root === undefined) delete process.env[SYSTEM_ROOT_ENV];
    else process.env[SYSTEM_ROOT_ENV] = saved.root;
    if (saved.chromium !== undefined) process.env.CHROMIUM_PATH = saved.chromium;
  }
}

describe('system dependency list', () => {
  it('finds nothing under an empty root and names the one command that installs everything', () => {
    const missing = withRoot(EMPTY_ROOT, () => findMissing(SYSTEM_DEPENDENCIES, EMPTY_ROOT));
    expect(missing.map((d) => d.debianPackage)).toEqual(['chromium', 'tmux', 'postgresql']);
    expect(installCommand(missing)).toBe('sudo apt-get install -y --no-install-recommends chromium tmux postgresql');
  });

  it('finds each program where Debian puts it, under the root', () => {
    const root = mkdtempSync(join(tmpdir(), 'wfkit-fake-system-'));
    try {
      mkdirSync(join(root, 'usr/bin'), { recursive: true });
      mkdirSync(join(root, 'usr/lib/postgresql/16/bin'), { recursive: true });
      for (const file of [
        'usr/bin/chromium',
        'usr/bin/tmux',
        'usr/lib/postgresql/16/bin/initdb',
        'usr/lib/postgresql/16/bin/pg_ctl',
      ])
        writeFileSync(join(root, file), '');
      const path = process.env.PATH;
      process.env.PATH = '/usr/bin';
      try {
        expect(withRoot(root, () => findMissing(SYSTEM_DEPENDENCIES, root))).toEqual([]);
      } finally {
        process.env.PATH = path;
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('asks only for what the selected files drive', () => {
    expect(neededBy(['test/protocol/outcome.test.ts'])).toEqual([]);
    expect(
      neededBy(['test/web/dashboard.e2e.test.ts', 'test/cli/start.e2e.test.ts']).map((d) => d.debianPackage),
    ).toEqual(['chromium', 'postgresql']);
    expect(neededBy(undefined)).toHaveLength(SYSTEM_DEPENDENCIES.length);
  });

  it('gives the helpers the same message (what, where, who needs it, the command)', () => {
    const error = withRoot(EMPTY_ROOT, () => {
      try {
        requireSystemDependency('tmux');
      } catch (caught) {
        return caught as Error;
      }
      return undefined;
    });
    expect(error?.message).toBe(missingMessage(findMissing([SYSTEM_DEPENDENCIES[1]!], EMPTY_ROOT)));
    expect(error?.message).toContain('sudo apt-get install -y --no-install-recommends tmux');
    expect(error?.message).toContain('test/tui/*.e2e.test.ts');
  });
});

describe('vitest global setup on a machine without the packages', () => {
  it('stops before any test with one message that lists the exact command', async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      [SYSTEM_ROOT_ENV]: EMPTY_ROOT,
      WF_TEST_SYSTEM_DEPS: 'check',
      CI: '',
    };
    delete env.CHROMIUM_PATH;
    delete env.VITEST;
    delete env.VITEST_WORKER_ID;
    delete env.VITEST_POOL_ID;
    // Three suites that drive Chromium, tmux and PostgreSQL: none of their tests may start.
    const files = [
      'test/web/dashboard.e2e.test.ts',
      'test/tui/dashboard-app.e2e.test.ts',
      'test/runner-core/store-postgres.test.ts',
    ];
    const vitest = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
    const child = spawn(process.execPath, [vitest, 'run', '--project', 'unit', '--project', 'e2e', ...files], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, output).not.toBe(0);
    expect(output).toContain('sudo apt-get install -y --no-install-recommends chromium tmux postgresql');
    expect(output).not.toMatch(/\[test setup\] \$ apt-get/);
    expect(output).not.toMatch(/Tests\s+\d+ (passed|failed)/);
  }, 60_000);
});

describe('apt-get install as root', () => {
  it('updates the package lists only when there are none, waits for the dpkg lock, and says what it installs and why', async () => {
    const { aptInstall } = await import('./apt-install.js');
    const bin = mkdtempSync(join(tmpdir(), 'wfkit-fake-apt-'));
    const log = join(bin, 'calls.log');
    writeFileSync(join(bin, 'apt-get'), `#!/bin/sh\necho "$*" >> '${log}'\n`, { mode: 0o755 });
    const saved = process.env.PATH;
    const printed: string[] = [];
    let calls = '';
    const spy = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
    process.env.PATH = `${bin}:${saved}`;
    try {
      withRoot(EMPTY_ROOT, () => aptInstall(findMissing(SYSTEM_DEPENDENCIES, EMPTY_ROOT).slice(0, 2)));
    } finally {
      process.env.PATH = saved;
      spy.mockRestore();
      if (existsSync(log)) calls = readFileSync(log, 'utf8');
      rmSync(bin, { recursive: true, force: true });
    }
    expect(printed.filter((line) => line.includes('installing'))).toEqual([
      expect.stringContaining('installing `chromium`: Chromium is missing'),
      expect.stringContaining('installing `tmux`: tmux is missing'),
    ]);
    expect(printed).toContain(
      '[test setup] $ apt-get -o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends chromium tmux',
    );
    // No package lists under the (empty) root: `update` first, then one install.
    expect(calls.trim().split('\n')).toEqual([
      '-o DPkg::Lock::Timeout=120 update -qq',
      '-o DPkg::Lock::Timeout=120 install -y -qq --no-install-recommends chromium tmux',
    ]);
  });
});
