import { describe, expect, it } from 'vitest';
import { packedFiles } from '../helpers/packages.js';

describe('npm pack: the web dashboard', () => {
  it('ships the built dashboard (dist/web) in wfkit-cli, none of its sources, and nothing of it in wfkit', () => {
    const files = packedFiles('cli');
    expect(packedFiles('sdk').filter((f) => f.path.startsWith('dist/web/'))).toEqual([]);
    const web = files.filter((f) => f.path.startsWith('dist/web/'));
    expect(web.map((f) => f.path).sort()).toEqual([
      'dist/web/app.js',
      'dist/web/favicon.svg',
      'dist/web/index.html',
      'dist/web/styles.css',
    ]);
    expect(files.filter((f) => f.path.startsWith('web/'))).toEqual([]);
    // Preact and the page's code, minified: small enough that no one minds it in the package.
    expect(web.find((f) => f.path === 'dist/web/app.js')!.size).toBeLessThan(120_000);
  });
});
