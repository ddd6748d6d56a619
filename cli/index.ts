#!/usr/bin/env node
// Checked before anything else loads: undici and better-sqlite3 fail on an older Node with
// errors that say nothing about the version.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `wf: wfkit needs Node.js 22.12 or newer; this is ${process.version}. Install a current Node (https://nodejs.org).\n`,
  );
  process.exit(1);
}

// Before anything else loads: `wf start` may replace this process with one whose young generation
// is capped (lib/young-generation.ts), and the work done until then is done twice.
const { capStartYoungGeneration } = await import('./lib/young-generation.js');
capStartYoungGeneration();

const { CommanderError } = await import('commander');
const { CliError } = await import('./errors.js');
const { createProgram } = await import('./program.js');

const program = createProgram();
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
