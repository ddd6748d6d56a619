import { existsSync } from 'node:fs';
import { delimiter, join, matchesGlob } from 'node:path';
import { findPostgresBin, POSTGRES_BASE } from '../helpers/postgres.js';

/**
 * The system programs the test suites drive for real, in one list: what each is, the Debian
 * package that provides it, where it is looked for, and which test files need it. The global setup
 * (`global-setup.ts`) installs what is missing before any test; the helpers name a missing one with
 * `missingMessage`, so the package names and the command live only here.
 *
 * Lookups can be pointed elsewhere, so a test can simulate a machine without these packages:
 * `WF_TEST_SYSTEM_ROOT=<folder>` prefixes every absolute path looked at (PATH folders included).
 */

export interface SystemDependency {
  /** What the suites call it. */
  name: string;
  /** The Debian package that provides it. */
  debianPackage: string;
  /** Where it is looked for, for messages. */
  lookedFor: string;
  /** Test files (globs from the checkout's root) that drive it. */
  suites: readonly string[];
  /** Its path, or undefined when it is missing. */
  find(root: string): string | undefined;
}

/** Prefix for every lookup (empty: the real machine). */
export const SYSTEM_ROOT_ENV = 'WF_TEST_SYSTEM_ROOT';

export const systemRoot = (): string => process.env[SYSTEM_ROOT_ENV] ?? '';

function onPath(root: string, command: string): string | undefined {
  const folders = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  return folders.map((folder) => join(root || '/', folder, command)).find((path) => existsSync(path));
}

export const SYSTEM_DEPENDENCIES: readonly SystemDependency[] = [
  {
    name: 'Chromium',
    debianPackage: 'chromium',
    lookedFor: '$CHROMIUM_PATH, else /usr/bin/chromium',
    suites: ['test/web/*.e2e.test.ts', 'test/upstash/wf-dev.e2e.test.ts'],
    find: (root) => {
      const path = process.env.CHROMIUM_PATH || join(root || '/', 'usr/bin/chromium');
      return existsSync(path) ? path : undefined;
    },
  },
  {
    name: 'tmux',
    debianPackage: 'tmux',
    lookedFor: 'tmux on PATH',
    suites: ['test/tui/*.e2e.test.ts'],
    find: (root) => onPath(root, 'tmux'),
  },
  {
    name: "PostgreSQL's server binaries",
    debianPackage: 'postgresql',
    lookedFor: `${POSTGRES_BASE}/<version>/bin/initdb and pg_ctl`,
    suites: [
      'test/runner-core/store-postgres.test.ts',
      'test/runner-core/multi-runner.e2e.test.ts',
      'test/cli/start.e2e.test.ts',
      'test/upstash/wf-start-postgres.e2e.test.ts',
    ],
    find: (root) => findPostgresBin(join(root || '/', POSTGRES_BASE)),
  },
];

/** Looks a dependency up by its Debian package name (the helpers' handle on this list). */
export function systemDependency(debianPackage: string): SystemDependency {
  const dependency = SYSTEM_DEPENDENCIES.find((d) => d.debianPackage === debianPackage);
  if (!dependency)
    throw new Error(`Expected a system dependency listed in test/setup/system-deps.ts, got "${debianPackage}".`);
  return dependency;
}

/** The dependencies that test files (paths relative to the checkout) need, or all of them. */
export function neededBy(files: readonly string[] | undefined): SystemDependency[] {
  if (files === undefined) return [...SYSTEM_DEPENDENCIES];
  return SYSTEM_DEPENDENCIES.filter((d) => files.some((file) => d.suites.some((glob) => matchesGlob(file, glob))));
}

export function findMissing(dependencies: readonly SystemDependency[], root = systemRoot()): SystemDependency[] {
  return dependencies.filter((d) => d.find(root) === undefined);
}

/** The one command that installs `missing`. */
export function installCommand(missing: readonly SystemDependency[]): string {
  return `sudo apt-get install -y --no-install-recommends ${missing.map((d) => d.debianPackage).join(' ')}`;
}

/** What is missing, for whom, and the exact command that fixes it. */
export function missingMessage(missing: readonly SystemDependency[]): string {
  const lines = missing.map(
    (d) =>
      `  - ${d.name} (Debian package \`${d.debianPackage}\`, looked for ${d.lookedFor}), needed by ${d.suites.join(', ')}`,
  );
  return [
    `The tests drive system programs that are missing on this machine:`,
    ...lines,
    `Install them (once) with:`,
    `  ${installCommand(missing)}`,
    `(\`npm test\` does this by itself when it runs as root.)`,
  ].join('\n');
}

/** Throws the standard message when `debianPackage`'s program is missing; returns its path otherwise. */
export function requireSystemDependency(debianPackage: string): string {
  const dependency = systemDependency(debianPackage);
  const path = dependency.find(systemRoot());
  if (path === undefined) throw new Error(missingMessage([dependency]));
  return path;
}
