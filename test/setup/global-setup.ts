import { relative } from 'node:path';
import type { TestProject } from 'vitest/node';
import { aptInstall, isRoot } from './apt-install.js';
import { findMissing, missingMessage, neededBy, systemRoot } from './system-deps.js';

/**
 * Vitest's global setup (runs once, before any test of any project): makes sure the system
 * programs the selected test files drive are here. Missing ones are installed with apt-get when
 * this runs as root; otherwise the run stops here with one message and the command to run.
 *
 * `WF_TEST_SYSTEM_DEPS=check` never installs (a test simulates a machine without the packages with
 * it and `WF_TEST_SYSTEM_ROOT`).
 */

export const CHECK_ONLY_ENV = 'WF_TEST_SYSTEM_DEPS';

/** The files this run will execute (relative to the root), so running one unit file never asks for Chromium. */
async function selectedFiles(project: TestProject): Promise<string[] | undefined> {
  const vitest = project.vitest;
  // `filenamePattern` holds the CLI's file filters; it is internal, so anything unexpected means "all files".
  const filters = (vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
  try {
    const specifications = await vitest.globTestSpecifications(filters);
    return specifications.map((spec) => relative(vitest.config.root, spec.moduleId).split('\\').join('/'));
  } catch {
    return undefined;
  }
}

/** An error vitest prints as its message alone: no stack or code frame around the command to run. */
function stop(message: string): Error {
  const error = new Error(message);
  error.stack = message;
  return error;
}

export default async function setup(project: TestProject): Promise<void> {
  const needed = neededBy(await selectedFiles(project));
  const missing = findMissing(needed);
  if (missing.length === 0) return;
  const checkOnly = process.env[CHECK_ONLY_ENV] === 'check';
  if (!isRoot() || checkOnly) throw stop(missingMessage(missing));
  aptInstall(missing);
  const stillMissing = findMissing(missing, systemRoot());
  if (stillMissing.length > 0)
    throw stop(`apt-get installed, but these are still missing:\n${missingMessage(stillMissing)}`);
}
