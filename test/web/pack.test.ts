import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('npm pack: the web dashboard', () => {
  it('ships the built dashboard (dist/web) and none of its sources', () => {
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` };
    const json = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const files = (JSON.parse(json) as { files: { path: string; size: number }[] }[])[0]!.files;
    const web = files.filter((f) => f.path.startsWith('dist/web/'));
    expect(web.map((f) => f.path).sort()).toEqual(['dist/web/app.js', 'dist/web/favicon.svg', 'dist/web/index.html', 'dist/web/styles.css']);
    expect(files.filter((f) => f.path.startsWith('web/'))).toEqual([]);
    // Preact and the page's code, minified: small enough that no one minds it in the package.
    expect(web.find((f) => f.path === 'dist/web/app.js')!.size).toBeLessThan(120_000);
  });
});
