import { Command, Option } from 'commander';
import { relative, resolve } from 'node:path';
import { CliError } from '../errors.js';
import { detectFramework, FRAMEWORKS, frameworkNamed, type Framework } from '../lib/frameworks.js';
import type { CliIO } from '../lib/io.js';
import { readAppPackage, report, scaffold } from '../lib/scaffold.js';

/** Asks which host to use; undefined when nobody can be asked (no TTY). */
export type ChooseFramework = (choices: readonly Framework[]) => Promise<Framework | undefined>;

/** The question on a terminal; @inquirer/prompts loads only when it is asked. */
export const chooseOnTty: ChooseFramework = async (choices) => {
  if (!process.stdin.isTTY || !process.stdout.isTTY) return undefined;
  const { select } = await import('@inquirer/prompts');
  const question = { message: 'Which framework does the app use?', choices: choices.map((f) => ({ name: f.label, value: f.name })) };
  const name = await select(question).catch((error: unknown) => {
    throw new CliError(130, 'CANCELLED', 'wf init cancelled; nothing was written.', { cause: error });
  });
  return frameworkNamed(name);
};

/** `wf init [dir]`: a new app from a starter, or the workflow route added to the app in `dir`. */
export function makeInitCommand(io: CliIO, choose: ChooseFramework = chooseOnTty): Command {
  return new Command('init')
    .description('create an app with a workflow route, or add the route to an existing app')
    .argument('[dir]', 'where the app is (or goes)', '.')
    .addOption(new Option('-f, --framework <name>', 'the host framework').choices(FRAMEWORKS.map((f) => f.name)))
    .option('--force', 'overwrite files and env entries that exist')
    .action(async (dirArg: string, options: { framework?: string; force?: boolean }) => {
      const dir = resolve(io.cwd, dirArg);
      const pkg = readAppPackage(dir);
      let framework = options.framework ? frameworkNamed(options.framework) : pkg && detectFramework(pkg);
      framework ??= await choose(FRAMEWORKS);
      if (!framework) {
        const why = pkg ? `Cannot tell the framework of the app in ${dir} from its package.json` : 'No framework given';
        throw new CliError(2, 'UNKNOWN_FRAMEWORK', `${why}: pass --framework (${FRAMEWORKS.map((f) => f.name).join(', ')}).`);
      }
      const result = scaffold({ dir, framework, force: options.force });
      for (const line of report(result, relative(io.cwd, dir) || '.')) io.out(line);
    });
}
