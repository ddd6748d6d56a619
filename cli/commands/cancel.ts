import { Command } from 'commander';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import type { CliIO } from '../lib/io.js';

/** `wf cancel <runId>`. */
export function makeCancelCommand(io: CliIO): Command {
  return withRunnerOptions(new Command('cancel'))
    .description('cancel a run that has not finished')
    .argument('<runId>', 'the run to cancel (wfr_…)')
    .action(async (runId: string, options: { runner: string; token?: string }) => {
      const run = await clientFrom(io, options).cancel(runId);
      io.out(`${run.id} ${run.status}`);
    });
}
