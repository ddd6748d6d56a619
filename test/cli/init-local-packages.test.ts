import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeInitCommand } from '../../cli/commands/init.js';
import { CliError } from '../../cli/errors.js';
import { checkoutRoot, findLocalPackages } from '../../cli/lib/local-packages.js';
import { findTemplatesDir, scaffold } from '../../cli/lib/scaffold.js';

/**
 * Until wfkit is on the npm registry, `wf init --wfkit-from <dir|tgz>` makes an app depend on the
 * tarballs `npm run pack` wrote (`file:` specs). test/package/init-install.test.ts installs one.
 */

const cleanups: string[] = [];
afterEach(() => {
  for (const dir of cleanups.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder as `npm run pack` leaves a checkout: both tarballs (contents do not matter here). */
function packedFolder(): string {
  const root = mkdtempSync(join(tmpdir(), 'wfkit-packed-'));
  cleanups.push(root);
  const dir = join(root, 'wfkit');
  mkdirSync(dir);
  for (const name of ['wfkit-0.1.0.tgz', 'wfkit-cli-0.1.0.tgz', 'unrelated-1.0.0.tgz'])
    writeFileSync(join(dir, name), 'tgz');
  return dir;
}

function capture(cwd: string): { io: Parameters<typeof makeInitCommand>[0]; out: string[] } {
  const out: string[] = [];
  return {
    io: {
      out: (line) => void out.push(line),
      err: (line) => void out.push(line),
      env: {},
      cwd,
      interrupted: () => new Promise(() => {}),
    },
    out,
  };
}

describe('wf init --wfkit-from: the app depends on local tarballs', () => {
  it('finds both tarballs from their folder, or from either file', () => {
    const dir = packedFolder();
    const both = { wfkit: join(dir, 'wfkit-0.1.0.tgz'), cli: join(dir, 'wfkit-cli-0.1.0.tgz') };
    expect(findLocalPackages(dir, '/')).toEqual(both);
    expect(findLocalPackages('wfkit-0.1.0.tgz', dir)).toEqual(both);
    expect(findLocalPackages(join(dir, 'wfkit-cli-0.1.0.tgz'), '/')).toEqual(both);
  });

  it('says what is missing and how to make it', () => {
    const dir = packedFolder();
    rmSync(join(dir, 'wfkit-cli-0.1.0.tgz'));
    const missing = (() => {
      try {
        return findLocalPackages(dir, '/');
      } catch (error) {
        return error;
      }
    })();
    expect(missing).toBeInstanceOf(CliError);
    expect((missing as CliError).message).toMatch(
      /^No wfkit-cli-<version>\.tgz in .*: run `npm run pack` in the wfkit checkout/,
    );
    expect(() => findLocalPackages(join(dir, 'nope'), '/')).toThrow(
      /--wfkit-from .*nope: nothing at .*wfkit-<version>\.tgz and wfkit-cli-<version>\.tgz/,
    );
  });

  it('a new app gets file: dependencies relative to it, and the report says so', async () => {
    const packed = packedFolder();
    const cwd = join(packed, '..');
    const { io, out } = capture(cwd);
    await makeInitCommand(io)
      .exitOverride()
      .parseAsync(['my app', '--framework', 'nextjs', '--wfkit-from', 'wfkit'], { from: 'user' });
    const pkg = JSON.parse(readFileSync(join(cwd, 'my app', 'package.json'), 'utf8'));
    expect(pkg.dependencies).toMatchObject({ next: expect.any(String), wfkit: 'file:../wfkit/wfkit-0.1.0.tgz' });
    expect(pkg.devDependencies).toMatchObject({
      typescript: expect.any(String),
      'wfkit-cli': 'file:../wfkit/wfkit-cli-0.1.0.tgz',
    });
    expect(pkg.wfkit).toEqual({ dev: 'npm run dev', port: 3000, route: '/api/workflow' });
    expect(out).toContain(
      '  wrote dependencies wfkit (file:../wfkit/wfkit-0.1.0.tgz) and wfkit-cli (file:../wfkit/wfkit-cli-0.1.0.tgz): the local tarballs, as the packages are not on the npm registry yet',
    );
    expect(out).toContain('  npm install');
  });

  it('an existing app keeps its package.json dependencies, and is told to install the tarballs', () => {
    const packed = packedFolder();
    const dir = join(packed, '..', 'mine');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'mine', dependencies: { hono: '4' } }));
    const result = scaffold({ dir, packages: findLocalPackages(packed, '/') });
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies).toEqual({ hono: '4' });
    expect(result.specs).toEqual({
      wfkit: 'file:../wfkit/wfkit-0.1.0.tgz',
      'wfkit-cli': 'file:../wfkit/wfkit-cli-0.1.0.tgz',
    });
  });

  it('`registry` keeps the registry specs', async () => {
    const cwd = packedFolder();
    await makeInitCommand(capture(cwd).io)
      .exitOverride()
      .parseAsync(['app', '--framework', 'hono', '--wfkit-from', 'registry'], { from: 'user' });
    const pkg = JSON.parse(readFileSync(join(cwd, 'app', 'package.json'), 'utf8'));
    expect([pkg.dependencies.wfkit, pkg.devDependencies['wfkit-cli']]).toEqual(['^0.1.0', '^0.1.0']);
  });

  it('knows a checkout (the repo, `wfkit-repo`) from an installed wfkit-cli', () => {
    expect(checkoutRoot(findTemplatesDir())).toBe(join(findTemplatesDir(), '..'));
    const installed = mkdtempSync(join(tmpdir(), 'wfkit-installed-'));
    cleanups.push(installed);
    writeFileSync(join(installed, 'package.json'), JSON.stringify({ name: 'wfkit-cli' }));
    expect(checkoutRoot(join(installed, 'templates'))).toBeUndefined();
  });
});
