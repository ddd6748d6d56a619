import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FRAMEWORKS } from '../../cli/lib/frameworks.js';
import { PACKAGE_DIRS, packedFiles } from '../helpers/packages.js';

const ADAPTERS = ['hono', 'svelte', 'nextjs', 'h3', 'solidjs', 'cloudflare', 'node'];
const manifest = (dir: string): Record<string, any> => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

describe('npm pack: wfkit, the SDK apps install', () => {
  const files = packedFiles('sdk').map((f) => f.path);
  const pkg = manifest(PACKAGE_DIRS.sdk);

  it('keeps the name and every subpath apps import; the runner is not one of them', () => {
    expect(pkg.name).toBe('wfkit');
    expect(Object.keys(pkg.exports).sort()).toEqual(
      ['.', './package.json', './protocol', ...ADAPTERS.map((a) => `./${a}`)].sort(),
    );
    for (const [subpath, target] of Object.entries(
      pkg.exports as Record<string, string | { types: string; default: string }>,
    )) {
      const paths = typeof target === 'string' ? [target] : [target.types, target.default];
      for (const path of paths) expect(files, subpath).toContain(path.replace(/^\.\//, ''));
    }
  });

  it('depends on devalue and ms only, and has no bin', () => {
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['devalue', 'ms']);
    expect(pkg.bin).toBeUndefined();
  });

  it('ships only the edge-safe folders (protocol, api, serve), no sources, tests or starters', () => {
    const folders = new Set(files.filter((f) => f.startsWith('dist/')).map((f) => f.split('/')[1]));
    expect([...folders].sort()).toEqual(['api', 'protocol', 'serve']);
    expect(files.filter((f) => !f.startsWith('dist/') && !['package.json', 'README.md'].includes(f))).toEqual([]);
  });
});

describe('npm pack: wfkit-cli, the runner and `wf`', () => {
  const files = packedFiles('cli').map((f) => f.path);
  const pkg = manifest(PACKAGE_DIRS.cli);

  it("owns the bins wf and wfkit and exports the runner as wfkit-cli/runner, at the SDK's version", () => {
    expect(pkg.name).toBe('wfkit-cli');
    expect(pkg.version).toBe(manifest(PACKAGE_DIRS.sdk).version);
    expect(pkg.bin).toEqual({ wf: './dist/cli/index.js', wfkit: './dist/cli/index.js' });
    expect(Object.keys(pkg.exports)).toEqual(['./runner', './package.json']);
    expect(files).toContain('dist/cli/index.js');
    expect(files).toContain('dist/runner-core/index.js');
  });

  it('ships every starter with its route, package.json and _gitignore', () => {
    for (const f of FRAMEWORKS) {
      expect(files).toContain(`templates/${f.template}/${f.routeFile}`);
      expect(files).toContain(`templates/${f.template}/package.json`);
      expect(files).toContain(`templates/${f.template}/_gitignore`);
    }
  });

  it('ships the starters as they are in templates/ (a stale assembly means: run `npm run build`)', () => {
    for (const f of FRAMEWORKS) {
      const shipped = readFileSync(join(PACKAGE_DIRS.cli, 'templates', f.template, 'package.json'), 'utf8');
      expect(shipped, f.template).toBe(
        readFileSync(join(PACKAGE_DIRS.cli, '..', '..', 'templates', f.template, 'package.json'), 'utf8'),
      );
      expect(JSON.parse(shipped).devDependencies['wfkit-cli'], f.template).toBe(
        `^${manifest(PACKAGE_DIRS.cli).version}`,
      );
    }
  });

  it('ships no installs, build output or secrets from a starter that was run in place', () => {
    const local =
      /(^|\/)(node_modules|\.next|\.svelte-kit|\.nuxt|\.output|\.wrangler|\.wf)\/|(^|\/)(\.env|\.env\.local|\.dev\.vars|package-lock\.json)$/;
    expect(files.filter((f) => f.startsWith('templates/') && local.test(f))).toEqual([]);
  });

  it('ships its own compiled copy of what the runner imports from the SDK folders, and no sources or tests', () => {
    for (const a of ADAPTERS) expect(files).toContain(`dist/serve/adapters/${a}.js`);
    expect(files).toContain('dist/protocol/index.js');
    expect(
      files.some(
        (f) => f.startsWith('test/') || (f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('templates/')),
      ),
    ).toBe(false);
  });
});
