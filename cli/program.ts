import { Command } from 'commander';
import { makeCancelCommand } from './commands/cancel.js';
import { makeDevCommand } from './commands/dev.js';
import { makeLogsCommand } from './commands/logs.js';
import { makeRunsCommand } from './commands/runs.js';
import { makeTriggerCommand } from './commands/trigger.js';
import { processIO, type CliIO } from './lib/io.js';

/** The `wf` program. Side-effect free until parsed, so tests build it with their own IO. */
export function createProgram(io: CliIO = processIO()): Command {
  const program = new Command('wf')
    .description('wfkit: durable workflow endpoints, with a runner you run yourself')
    .version(VERSION, '-v, --version')
    .option('--debug', 'show stack traces on errors')
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ writeOut: (s) => io.out(s.replace(/\n$/, '')), writeErr: (s) => io.err(s.replace(/\n$/, '')) });
  for (const make of [makeDevCommand, makeLogsCommand, makeRunsCommand, makeTriggerCommand, makeCancelCommand]) {
    program.addCommand(make(io));
  }
  return program;
}

export const VERSION = '0.1.0';
