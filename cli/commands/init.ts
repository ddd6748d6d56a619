import { Command, Option } from 'commander';
import { relative, resolve } from 'node:path';
import { CliError } from '../errors.js';
import { detectFramework, FRAMEWORKS, frameworkNamed, type Framework } from '../lib/frameworks.js';
import { shellQuote } from '../lib/inside-target.js';
import type { CliIO } from '../lib/io.js';
import { checkoutRoot, findLocalPackages, type LocalPackages } from '../lib/local-packages.js';
import { findTemplatesDir, readAppPackage, report, scaffold } from '../lib/scaffold.js';

/** Asks which host to use; undefined when nobody can be asked (no TTY). */
export type ChooseFramework = (choices: readonly Framework[]) => Promise<Framework | undefined>;

/** The question on a terminal; @inquirer/prompts loads only when it is asked. */
export const chooseOnTty: ChooseFramework = async (choices) => {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return undefined;
  const { select } = await import('@inquirer/prompts');
  const question = {
    message: 'Which framework does the app use?',
    choices: choices.map((f) => ({ name: f.label, value: f.name })),
  };
  const name = await select(question).catch((error: unknown) => {
    throw new CliError(130, 'CANCELLED', 'wf init cancelled; nothing was written.', { cause: error });
  });
  return frameworkNamed(name);
};

/**
 * The tarballs to depend on: `--wfkit-from` (`registry` for the npm registry's `^0.1.0`), else,
 * run from a checkout of the repo, the ones `npm run pack` left there, as the packages are not on
 * the registry yet. A checkout without them gets the registry's specs and a note saying how.
 */
function localPackages(wfkitFrom: string | undefined, cwd: string): { packages?: LocalPackages; note?: string } {
  if (wfkitFrom === 'registry') return {};
  if (wfkitFrom) return { packages: findLocalPackages(wfkitFrom, cwd) };
  const checkout = checkoutRoot(findTemplatesDir());
  if (!checkout) return {};
  try {
    return { packages: findLocalPackages(checkout, cwd) };
  } catch {
    return {
      note:
        `Note: wfkit and wfkit-cli are not on the npm registry yet, so \`npm install\` cannot fetch them. ` +
        `Run \`npm run pack\` in ${checkout} (it makes both tarballs there), then \`wf init --wfkit-from ${shellQuote(checkout)}\` here again.`,
    };
  }
}

/** `wf init [dir]`: a new app from a starter, or the workflow route added to the app in `dir`. */
export function makeInitCommand(io: CliIO, choose: ChooseFramework = chooseOnTty): Command {
  return new Command('init')
    .description('create an app with a workflow route, or add the route to an existing app')
    .argument('[dir]', 'where the app is (or goes)', '.')
    .addOption(new Option('-f, --framework <name>', 'the host framework').choices(FRAMEWORKS.map((f) => f.name)))
    .option('--force', 'overwrite files and env entries that exist')
    .option(
      '--wfkit-from <dir|tgz>',
      'depend on the wfkit and wfkit-cli tarballs `npm run pack` made (a folder holding both, or one of them), or `registry`; default: the tarballs of the checkout `wf` runs from, else the registry',
    )
    .action(async (dirArg: string, options: { framework?: string; force?: boolean; wfkitFrom?: string }) => {
      const dir = resolve(io.cwd, dirArg);
      const pkg = readAppPackage(dir);
      let framework = options.framework ? frameworkNamed(options.framework) : pkg && detectFramework(pkg);
      framework ??= await choose(FRAMEWORKS);
      if (!framework) {
        const why = pkg ? `Cannot tell the framework of the app in ${dir} from its package.json` : 'No framework given';
        throw new CliError(
          2,
          'UNKNOWN_FRAMEWORK',
          `${why}: pass --framework (${FRAMEWORKS.map((f) => f.name).join(', ')}).`,
        );
      }
      const { packages, note } = localPackages(options.wfkitFrom, io.cwd);
      const result = scaffold({ dir, framework, force: options.force, packages });
      for (const line of report(result, relative(io.cwd, dir) || '.')) io.out(line);
      if (note) io.out(`\n${note}`);
    });
}
