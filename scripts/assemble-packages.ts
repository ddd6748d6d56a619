import { cpSync, existsSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The folders of the one `tsc` build (`dist/`) that make the SDK, `wfkit`: what apps import.
 * Edge-safe and self-contained: nothing in them imports from another `dist/` folder at runtime
 * (test/package/import-graph.test.ts and the installed-package test check it).
 */
export const SDK_FOLDERS = ['protocol', 'api', 'serve'];

/** Installs, build output and secrets of a starter that was run in place: never shipped. */
const NOT_SHIPPED = new Set([
  'node_modules',
  '.next',
  '.svelte-kit',
  '.nuxt',
  '.output',
  '.wrangler',
  '.wf',
  '.env',
  '.env.local',
  '.dev.vars',
  'package-lock.json',
  'next-env.d.ts',
]);

/**
 * Fills the two packages' folders from the build, so each can be packed or published as it is:
 * - `packages/wfkit/dist/`: the SDK folders only (`protocol/`, `api/`, `serve/`);
 * - `packages/cli/dist/`: the whole build (runner-core, cli, tui, web and everything they import,
 *   the SDK folders included: the CLI carries its own compiled copy, so it never depends on a
 *   matching `wfkit` being installed), plus `packages/cli/templates/` (the starters `wf init` copies).
 * Both also get the README. Run by `npm run build`, after `tsc` and the web build.
 * @example node scripts/assemble-packages.ts
 */
export function assemblePackages(): void {
  const dist = join(root, 'dist');
  if (!existsSync(join(dist, 'cli', 'index.js')))
    throw new Error('dist/ is missing: run `tsc -p tsconfig.build.json` first (`npm run build` does).');
  const sdk = join(root, 'packages', 'wfkit');
  const cli = join(root, 'packages', 'cli');
  for (const dir of [join(sdk, 'dist'), join(cli, 'dist'), join(cli, 'templates')])
    rmSync(dir, { recursive: true, force: true });
  for (const folder of SDK_FOLDERS) cpSync(join(dist, folder), join(sdk, 'dist', folder), { recursive: true });
  cpSync(dist, join(cli, 'dist'), { recursive: true });
  cpSync(join(root, 'templates'), join(cli, 'templates'), {
    recursive: true,
    filter: (path) => !NOT_SHIPPED.has(basename(path)),
  });
  for (const dir of [sdk, cli]) cpSync(join(root, 'README.md'), join(dir, 'README.md'));
}

if (import.meta.main) assemblePackages();
