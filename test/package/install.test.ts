import { execFileSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { npmEnv, packBoth } from '../helpers/packages.js';

/**
 * What an app gets: both tarballs packed, `wfkit` installed into an empty app the way a user
 * would, then `wfkit-cli` beside it as a devDependency. Uses the shared npm cache (offline when
 * everything is cached), else the registry.
 */

const SUBPATHS = [
  'wfkit',
  'wfkit/hono',
  'wfkit/svelte',
  'wfkit/nextjs',
  'wfkit/h3',
  'wfkit/solidjs',
  'wfkit/cloudflare',
  'wfkit/node',
  'wfkit/protocol',
];

/** Installed packages, `@scope/name` counted once per name; `.bin` and npm's own files are not packages. */
function installedPackages(nodeModules: string): string[] {
  return readdirSync(nodeModules).flatMap((name) => {
    if (name.startsWith('.')) return [];
    if (name.startsWith('@')) return readdirSync(join(nodeModules, name)).map((inner) => `${name}/${inner}`);
    return [name];
  });
}

/** Every file under `dir` (symlinks not followed), with its size. */
function walk(dir: string): { path: string; size: number }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return walk(path);
    return [{ path, size: lstatSync(path).size }];
  });
}

const npm = (args: string[], cwd: string): string =>
  execFileSync('npm', args, {
    cwd,
    env: npmEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 300_000,
  });

describe('npm install of the packed packages into an empty app', () => {
  let app = '';
  let tarballs: { sdk: string; cli: string };

  beforeAll(() => {
    tarballs = packBoth();
    app = mkdtempSync(join(tmpdir(), 'wfkit-install-'));
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }, null, 2));
    npm(['install', '--prefer-offline', '--no-audit', '--no-fund', tarballs.sdk], app);
  }, 300_000);

  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  it('wfkit brings at most 3 packages (itself, devalue, ms), under 2 MB, and no native module', () => {
    const packages = installedPackages(join(app, 'node_modules'));
    const files = walk(join(app, 'node_modules'));
    const bytes = files.reduce((n, f) => n + f.size, 0);
    console.log(
      `[wfkit installed] ${packages.length} packages (${packages.join(', ')}), ${(bytes / 1024).toFixed(0)} KiB`,
    );
    expect(packages.sort()).toEqual(['devalue', 'ms', 'wfkit']);
    expect(bytes).toBeLessThan(2 * 1024 * 1024);
    expect(files.filter((f) => f.path.endsWith('.node'))).toEqual([]);
  });

  it('every subpath imports in plain Node, with no framework installed', () => {
    const script = `for (const s of ${JSON.stringify(SUBPATHS)}) { const m = await import(s); if (Object.keys(m).length === 0) throw new Error(s + ' exports nothing'); } console.log('ok');`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8' });
    expect(out.trim()).toBe('ok');
    const exported = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('wfkit'); console.log(['serve', 'Client', 'NonRetryableError'].filter((n) => !(n in m)).join(',') || 'all')",
      ],
      { cwd: app, encoding: 'utf8' },
    );
    expect(exported.trim()).toBe('all');
  });

  it('wfkit-cli installs beside it as a devDependency, and `npx wf --help` and `npx wfkit --help` run', () => {
    npm(['install', '--save-dev', '--prefer-offline', '--no-audit', '--no-fund', tarballs.cli], app);
    for (const bin of ['wf', 'wfkit']) {
      const help = execFileSync('npx', ['--no-install', bin, '--help'], { cwd: app, env: npmEnv(), encoding: 'utf8' });
      expect(help).toMatch(/Usage: wf/);
      expect(help).toContain('init');
      expect(help).toContain('dev');
    }
    const runner = execFileSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('wfkit-cli/runner'); console.log(Object.keys(m).length > 0 ? 'ok' : 'empty')",
      ],
      { cwd: app, encoding: 'utf8' },
    );
    expect(runner.trim()).toBe('ok');
  }, 300_000);
});
