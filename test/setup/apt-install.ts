import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { systemRoot, type SystemDependency } from './system-deps.js';

/**
 * `apt-get install` for the test suites' system programs, as root. Another apt (a second test run,
 * unattended upgrades) may hold dpkg's lock: wait for it up to two minutes instead of failing.
 */

const LOCK_TIMEOUT = ['-o', 'DPkg::Lock::Timeout=120'];
const LISTS = '/var/lib/apt/lists';

export const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

function apt(args: readonly string[]): number | null {
  const command = ['apt-get', ...LOCK_TIMEOUT, ...args];
  console.log(`[test setup] $ ${command.join(' ')}`);
  const result = spawnSync(command[0]!, command.slice(1), {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.error) throw new Error(`Could not run apt-get: ${result.error.message}`, { cause: result.error });
  return result.status;
}

/** A fresh container has no package lists: `install` would find nothing until `update` ran. */
const hasPackageLists = (): boolean => {
  const lists = join(systemRoot() || '/', LISTS);
  return existsSync(lists) && readdirSync(lists).some((name) => name.includes('_Packages'));
};

/** Installs `missing`; runs `apt-get update` first only when there are no lists, or once more when install fails. */
export function aptInstall(missing: readonly SystemDependency[]): void {
  const packages = missing.map((d) => d.debianPackage);
  for (const d of missing)
    console.log(
      `[test setup] installing \`${d.debianPackage}\`: ${d.name} is missing (looked for ${d.lookedFor}) and ${d.suites.join(', ')} drive it.`,
    );
  const install = ['install', '-y', '-qq', '--no-install-recommends', ...packages];
  if (!hasPackageLists() && apt(['update', '-qq']) !== 0) throw new Error('`apt-get update` failed (output above).');
  if (apt(install) === 0) return;
  // Stale lists name package versions the mirror no longer has: refresh them and try once more.
  if (apt(['update', '-qq']) !== 0 || apt(install) !== 0)
    throw new Error(`\`apt-get install ${packages.join(' ')}\` failed (output above).`);
}
