import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FRAMEWORKS } from '../../cli/lib/frameworks.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The file list `npm pack` would publish (nothing is written). */
function packedFiles(): string[] {
  const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` };
  const json = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return (JSON.parse(json) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path);
}

describe('npm pack', () => {
  const files = packedFiles();

  it('ships every starter with its route, package.json and _gitignore', () => {
    for (const f of FRAMEWORKS) {
      expect(files).toContain(`templates/${f.template}/${f.routeFile}`);
      expect(files).toContain(`templates/${f.template}/package.json`);
      expect(files).toContain(`templates/${f.template}/_gitignore`);
    }
  });

  it('ships no installs, build output or secrets from a starter that was run in place', () => {
    const local = /(^|\/)(node_modules|\.next|\.svelte-kit|\.nuxt|\.output|\.wrangler|\.wf)\/|(^|\/)(\.env|\.env\.local|\.dev\.vars|package-lock\.json)$/;
    expect(files.filter((f) => f.startsWith('templates/') && local.test(f))).toEqual([]);
  });

  it('ships the built adapters for every subpath', () => {
    for (const a of ['hono', 'svelte', 'nextjs', 'h3', 'solidjs', 'cloudflare', 'node']) expect(files).toContain(`dist/serve/adapters/${a}.js`);
    expect(files.some((f) => f.startsWith('test/') || f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.startsWith('templates/'))).toBe(false);
    expect(files).toContain('dist/cli/index.js');
  });
});
