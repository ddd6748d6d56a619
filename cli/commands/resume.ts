import { Command } from 'commander';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import type { CliIO } from '../lib/io.js';

/** `wf resume <runId>`. */
export function makeResumeCommand(io: CliIO): Command {
  return withRunnerOptions(new Command('resume'))
    .description('start a failed or cancelled run again at the step that failed (its succeeded steps do not run again)')
    .argument('<runId>', 'the run to resume (wfr_…)')
    .action(async (runId: string, options: { runner: string; token?: string }) => {
      const run = await clientFrom(io, options).resume(runId);
      io.out(`${run.id} ${run.status}`);
    });
}
