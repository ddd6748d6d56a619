import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The two packages this repo publishes, as `npm run build` assembles them (scripts/assemble-packages.ts):
 * `wfkit` (packages/wfkit, the SDK apps import) and `wfkit-cli` (packages/cli, the runner and `wf`).
 */

const ROOT = resolve(import.meta.dirname, '../..');
export const PACKAGE_DIRS = { sdk: join(ROOT, 'packages', 'wfkit'), cli: join(ROOT, 'packages', 'cli') } as const;
export type PackageKey = keyof typeof PACKAGE_DIRS;

/** Node 24 first on PATH, so npm and the bins it installs run on it. */
export const npmEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
});

function assertAssembled(dir: string): void {
  if (!existsSync(join(dir, 'dist')))
    throw new Error(`${relative(ROOT, dir)}/dist is missing: run \`npm run build\` first (npm test does).`);
}

/** The files `npm pack` would publish from one package (nothing is written). */
export function packedFiles(key: PackageKey): { path: string; size: number }[] {
  const dir = PACKAGE_DIRS[key];
  assertAssembled(dir);
  const json = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: dir,
    env: npmEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return (JSON.parse(json) as { files: { path: string; size: number }[] }[])[0]!.files;
}

function hashTree(hash: ReturnType<typeof createHash>, dir: string): void {
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) hashTree(hash, path);
    else hash.update(relative(ROOT, path)).update(readFileSync(path));
  }
}

/**
 * `npm pack` of one package, once per content: cached in the temp folder under a hash of the
 * package's folder, so every test and host (and later runs) share one tarball.
 */
export function packOnce(key: PackageKey): string {
  const dir = PACKAGE_DIRS[key];
  assertAssembled(dir);
  const hash = createHash('sha256');
  hashTree(hash, dir);
  const cache = join(tmpdir(), 'wfkit-pack', hash.digest('hex').slice(0, 16));
  const tarball = join(cache, `${key}.tgz`);
  if (existsSync(tarball)) return tarball;
  const staging = mkdtempSync(join(tmpdir(), 'wfkit-pack-'));
  execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', staging], {
    cwd: dir,
    env: npmEnv(),
    stdio: 'ignore',
  });
  const packed = readdirSync(staging).find((f) => f.endsWith('.tgz'))!;
  mkdirSync(cache, { recursive: true });
  renameSync(join(staging, packed), tarball);
  rmSync(staging, { recursive: true, force: true });
  return tarball;
}

/** Both tarballs: the SDK (`wfkit`) and the CLI + runner (`wfkit-cli`). */
export function packBoth(): { sdk: string; cli: string } {
  return { sdk: packOnce('sdk'), cli: packOnce('cli') };
}
