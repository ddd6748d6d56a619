import { Command, Option } from 'commander';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import { formatDuration } from '../../view/duration.js';
import { glyph, RUN_STATUSES } from '../../view/status.js';
import { time } from '../lib/format.js';
import type { CliIO } from '../lib/io.js';
import { parsePositiveInt } from '../lib/parse.js';

/** `wf runs`: the newest runs, one per line. */
export function makeRunsCommand(io: CliIO): Command {
  return withRunnerOptions(new Command('runs'))
    .description('list runs, newest first')
    .addOption(new Option('-s, --status <status>', 'only runs with this status').choices(RUN_STATUSES))
    .addOption(new Option('-n, --limit <n>', 'how many').default(20).argParser(parsePositiveInt))
    .option('--cursor <runId>', 'continue after this run id (from a previous page)')
    .option('--json', 'print the page as JSON')
    .action(async (options: { runner: string; token?: string; status?: string; limit: number; cursor?: string; json?: boolean }) => {
      const page = await clientFrom(io, options).listRuns({ status: options.status, limit: options.limit, cursor: options.cursor });
      if (options.json) return io.out(JSON.stringify(page));
      if (page.runs.length === 0) return io.out('No runs yet.');
      for (const run of page.runs) {
        const took = run.finishedAt ? formatDuration(run.finishedAt - run.createdAt) : '';
        io.out(`${glyph(run.status)} ${run.id}  ${run.status.padEnd(9)} ${String(run.stepsDone).padStart(3)} steps  ${time(run.createdAt)}  ${took.padStart(8)}  ${run.url}`);
      }
      if (page.nextCursor) io.out(`… more: wf runs --cursor ${page.nextCursor}`);
    });
}
