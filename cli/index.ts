#!/usr/bin/env node
import { CommanderError } from 'commander';
import { CliError } from './errors.js';
import { createProgram } from './program.js';

const program = createProgram();
program.exitOverride();
try {
  await program.parseAsync(process.argv);
  // Open handles (undici keep-alive, timers) must not keep a finished command alive.
  process.exit(0);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  const debug = process.argv.includes('--debug');
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`wf: ${message}\n`);
  if (debug && error instanceof Error && error.stack) process.stderr.write(error.stack + '\n');
  else if (!(error instanceof CliError)) process.stderr.write('(run again with --debug for the stack trace)\n');
  process.exit(error instanceof CliError ? error.exitCode : 1);
}
