import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmEnv, packBoth, PACKAGE_DIRS } from '../helpers/packages.js';

/**
 * README's way to an app before wfkit is on the npm registry: `npm run pack` in a checkout, then
 * `wf init --wfkit-from <that folder>`. The scaffolded app installs with `npm install --offline`:
 * npm sends no request at all, so `wfkit` and `wfkit-cli` can only come from the `file:` tarballs
 * (their own dependencies, and the starter's, from the npm cache the other package tests fill).
 */

const ROOT = resolve(import.meta.dirname, '../..');
const run = (command: string, args: string[], cwd: string): string =>
  execFileSync(command, args, {
    cwd,
    env: npmEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 300_000,
  });

describe('wf init --wfkit-from: a new app installs the local tarballs, with no registry', () => {
  let work = '';
  let app = '';

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'wfkit-init-install-'));
    // What `npm run pack` leaves in the checkout: both tarballs under npm's names.
    const packed = join(work, 'wfkit');
    mkdirSync(packed);
    const version = (JSON.parse(readFileSync(join(PACKAGE_DIRS.sdk, 'package.json'), 'utf8')) as { version: string })
      .version;
    const tarballs = packBoth();
    copyFileSync(tarballs.sdk, join(packed, `wfkit-${version}.tgz`));
    copyFileSync(tarballs.cli, join(packed, `wfkit-cli-${version}.tgz`));
    run(
      process.execPath,
      [join(ROOT, 'packages/cli/dist/cli/index.js'), 'init', 'app', '--framework', 'hono', '--wfkit-from', 'wfkit'],
      work,
    );
    app = join(work, 'app');
    run('npm', ['install', '--offline', '--no-audit', '--no-fund'], app);
  }, 600_000);

  afterAll(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('package.json and the lockfile resolve wfkit and wfkit-cli to the tarballs', () => {
    const pkg = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8'));
    expect(pkg.dependencies.wfkit).toMatch(/^file:\.\.\/wfkit\/wfkit-[\d.]+\.tgz$/);
    expect(pkg.devDependencies['wfkit-cli']).toMatch(/^file:\.\.\/wfkit\/wfkit-cli-[\d.]+\.tgz$/);
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { resolved?: string }>;
    };
    expect(lock.packages['node_modules/wfkit']?.resolved).toBe(pkg.dependencies.wfkit);
    expect(lock.packages['node_modules/wfkit-cli']?.resolved).toBe(pkg.devDependencies['wfkit-cli']);
  });

  it("the route's import and the `wf` bin work in the installed app", () => {
    expect(existsSync(join(app, 'node_modules', 'wfkit', 'package.json'))).toBe(true);
    const imported = run(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('wfkit/hono'); console.log(typeof m.serve)"],
      app,
    );
    expect(imported.trim()).toBe('function');
    expect(run('npx', ['--no-install', 'wf', '--help'], app)).toMatch(/Usage: wf/);
  });
});
