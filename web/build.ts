import { build } from 'esbuild';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Files copied as they are next to the bundle. */
const STATIC_FILES = ['index.html', 'styles.css', 'favicon.svg'];

/**
 * Builds the web dashboard into `outDir` (default `dist/web`, which the package ships and
 * runner-core/api/dashboard.ts serves): one ES module bundle (`app.js`, Preact, the runner API
 * contract `api/` (its one Client) and the shared view model `view/`, with the `protocol/` they
 * read, included; nothing loaded from a CDN) plus the static files.
 * Run by `npm run build` (`node web/build.ts`: Node 24 strips the types).
 * @example await buildWeb(); // dist/web/{index.html, app.js, styles.css, favicon.svg}
 */
export async function buildWeb(outDir: string = join(here, '..', 'dist', 'web')): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [join(here, 'src', 'main.tsx')],
    outfile: join(outDir, 'app.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // Browsers from 2023 on: what a laptop or phone runs today, without down-levelling syntax.
    target: ['es2022', 'chrome111', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    // No source map: it would triple the dashboard's share of the package; debug from web/src.
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  for (const file of STATIC_FILES) copyFileSync(join(here, 'src', file), join(outDir, file));
}

if (import.meta.main) await buildWeb();
