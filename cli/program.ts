import { Command } from 'commander';
import { makeBulkCommand } from './commands/bulk.js';
import { makeCancelCommand } from './commands/cancel.js';
import { makeDevCommand } from './commands/dev.js';
import { makeInitCommand } from './commands/init.js';
import { makeLogsCommand } from './commands/logs.js';
import { makeNotifyCommand } from './commands/notify.js';
import { makePruneCommand } from './commands/prune.js';
import { makeRunsCommand } from './commands/runs.js';
import { makeResumeCommand } from './commands/resume.js';
import { makeScheduleCommand } from './commands/schedule.js';
import { makeStartCommand } from './commands/start.js';
import { makeTriggerCommand } from './commands/trigger.js';
import { processIO, type CliIO } from './lib/io.js';

/**
 * The `wf` program. Side-effect free until parsed, so tests build it with their own IO.
 * It never calls process.exit: parse errors, --help and --version throw a CommanderError
 * (exitCode 0 for help and version), which the caller (cli/index.ts) turns into an exit.
 */
export function createProgram(io: CliIO = processIO()): Command {
  const program = new Command('wf')
    .description('wfkit: durable workflow endpoints, with a runner you run yourself')
    .version(VERSION, '-v, --version')
    .option('--debug', 'show stack traces on errors')
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) })
    .exitOverride();
  for (const make of [
    makeInitCommand,
    makeDevCommand,
    makeLogsCommand,
    makeRunsCommand,
    makeTriggerCommand,
    makeCancelCommand,
    makeNotifyCommand,
    makeStartCommand,
    makeResumeCommand,
    makeBulkCommand,
    makeScheduleCommand,
    makePruneCommand,
  ]) {
    // `addCommand` (unlike `.command()`) copies none of the program's settings: without this a
    // subcommand's parse errors and --help would bypass `io`, skip the usage hint, and call
    // process.exit even when the program has exitOverride().
    program.addCommand(make(io).copyInheritedSettings(program));
  }
  return program;
}

export const VERSION = '0.1.0';
