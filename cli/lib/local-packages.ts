import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { CliError } from '../errors.js';

/**
 * Until `wfkit` and `wfkit-cli` are on the npm registry, an app installs them from the tarballs
 * `npm run pack` makes in a checkout of this repo. `wf init --wfkit-from <dir|tgz>` (or `wf init`
 * run from a checkout) writes `file:` dependencies on them instead of `^0.1.0`, which would 404.
 */

/** Absolute paths of the two tarballs. */
export interface LocalPackages {
  wfkit: string;
  cli: string;
}

const SDK_TARBALL = /^wfkit-(\d[\w.+-]*)\.tgz$/;
const CLI_TARBALL = /^wfkit-cli-(\d[\w.+-]*)\.tgz$/;

/** The newest (last modified) file of `dir` whose name matches, or undefined. */
function newest(dir: string, pattern: RegExp): string | undefined {
  const found = readdirSync(dir)
    .filter((name) => pattern.test(name))
    .map((name) => join(dir, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return found[0];
}

/**
 * The tarballs named by `--wfkit-from`: a folder holding both (a checkout after `npm run pack`, or
 * wherever they were copied), or one of the two files, with the other beside it.
 * @example findLocalPackages('../wfkit', process.cwd()) // { wfkit: '/src/wfkit/wfkit-0.1.0.tgz', cli: '/src/wfkit/wfkit-cli-0.1.0.tgz' }
 */
export function findLocalPackages(from: string, cwd: string): LocalPackages {
  const path = resolve(cwd, from);
  if (!existsSync(path))
    throw new CliError(
      2,
      'WFKIT_FROM',
      `--wfkit-from ${from}: nothing at ${path}. Expected a folder with wfkit-<version>.tgz and wfkit-cli-<version>.tgz (\`npm run pack\` in a wfkit checkout makes them), or one of those files.`,
    );
  const dir = statSync(path).isDirectory() ? path : dirname(path);
  const name = basename(path);
  const wfkit = SDK_TARBALL.test(name) ? path : newest(dir, SDK_TARBALL);
  const cli = CLI_TARBALL.test(name) ? path : newest(dir, CLI_TARBALL);
  if (!wfkit || !cli) {
    const missing = [!wfkit && 'wfkit-<version>.tgz', !cli && 'wfkit-cli-<version>.tgz'].filter(Boolean).join(' and ');
    throw new CliError(
      2,
      'WFKIT_FROM',
      `No ${missing} in ${dir}: run \`npm run pack\` in the wfkit checkout (it writes both there), then pass that folder to --wfkit-from.`,
    );
  }
  return { wfkit, cli };
}

/**
 * The checkout this CLI runs from (`node dist/cli/index.js` in the repo), or undefined for an
 * installed `wfkit-cli`: the repo's own package.json is `wfkit-repo`, the published one `wfkit-cli`.
 */
export function checkoutRoot(templatesDir: string): string | undefined {
  const root = dirname(templatesDir);
  try {
    return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name?: string }).name === 'wfkit-repo'
      ? root
      : undefined;
  } catch {
    return undefined;
  }
}

/** `file:` specs relative to the app (what `npm install <tarball>` writes itself), POSIX separators. */
export function fileSpecs(packages: LocalPackages, appDir: string): { wfkit: string; 'wfkit-cli': string } {
  const spec = (tarball: string): string => `file:${relative(appDir, tarball).split(sep).join('/')}`;
  return { wfkit: spec(packages.wfkit), 'wfkit-cli': spec(packages.cli) };
}
