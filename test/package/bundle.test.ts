import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * What Cloudflare Workers' bundler (wrangler runs esbuild) makes of each entry an app can import:
 * nothing from node builtins, nor better-sqlite3, undici, ink or react. Anything the bundle would
 * load from outside is kept external and listed, so the test names the offending import and the
 * file it came from, instead of failing on "Could not resolve".
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FORBIDDEN_PACKAGES = ['better-sqlite3', 'undici', 'ink', 'react'];
const ENTRIES = [
  'serve/index.ts',
  ...['hono', 'svelte', 'nextjs', 'h3', 'solidjs', 'cloudflare'].map((a) => `serve/adapters/${a}.ts`),
  'protocol/index.ts',
];

interface Bundled {
  /** Every import esbuild left outside the bundle, as `importer -> specifier`. */
  external: string[];
  /** Source files inside the bundle, relative to the repo. */
  inputs: string[];
  bytes: number;
}

/** Bundles one entry the way wrangler does (workerd conditions, ESM), everything resolvable inlined. */
async function bundleForWorkers(entry: string, platform: 'neutral' | 'browser'): Promise<Bundled> {
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform,
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    logLevel: 'silent',
    // Minified, as a Worker ships it: the size then measures code, not how the source is formatted.
    minify: true,
    // Mark builtins and forbidden packages external so they show up in the metafile, not as errors.
    external: ['node:*', ...builtinModules, ...FORBIDDEN_PACKAGES],
  });
  const meta: Metafile = result.metafile;
  const external = Object.entries(meta.inputs).flatMap(([file, input]) =>
    input.imports.filter((i) => i.external).map((i) => `${file} -> ${i.path}`),
  );
  return {
    external,
    inputs: Object.keys(meta.inputs),
    bytes: result.outputFiles.reduce((n, f) => n + f.contents.length, 0),
  };
}

describe('bundling for Cloudflare Workers (esbuild)', () => {
  for (const platform of ['neutral', 'browser'] as const) {
    for (const entry of ENTRIES) {
      it(`${entry} (platform: ${platform}) pulls in no node: module and no node-only package`, async () => {
        const bundled = await bundleForWorkers(entry, platform);
        expect(bundled.external).toEqual([]);
        const nodeOnly = new RegExp(`^(runner-core|cli|tui)/|node_modules/(${FORBIDDEN_PACKAGES.join('|')})/`);
        expect(bundled.inputs.filter((file) => nodeOnly.test(file))).toEqual([]);
        // A thin adapter over the core: a bundle far past this means something heavy slipped in.
        expect(bundled.bytes).toBeLessThan(65_000);
      });
    }
  }

  it('would notice: bundling the local runner lists node builtins and better-sqlite3 (control)', async () => {
    const bundled = await bundleForWorkers('cli/lib/local-runner.ts', 'neutral');
    expect(bundled.external.join('\n')).toMatch(/-> node:/);
    expect(bundled.external.join('\n')).toMatch(/-> better-sqlite3/);
  });
});
