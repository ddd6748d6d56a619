import { Command } from 'commander';
import type { RunnerEvent } from '../../runner-core/events.js';
import { FINISHED_RUN_STATUSES } from '../../runner-core/store/types.js';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import { eventLine, runStory } from '../lib/format.js';
import type { CliIO } from '../lib/io.js';

interface LogsOptions {
  runner: string;
  token?: string;
  follow?: boolean;
  json?: boolean;
}

/** `wf logs [runId]`: one run's story, or every run's events; `--follow` keeps going live. */
export function makeLogsCommand(io: CliIO): Command {
  return withRunnerOptions(new Command('logs'))
    .description('print the log of one run, or of all runs')
    .argument('[runId]', 'the run (wfr_…); all runs when left out')
    .option('-f, --follow', 'keep printing new events (until the run finishes, or Ctrl-C)')
    .option('--json', 'one JSON object per line')
    .action(async (runId: string | undefined, options: LogsOptions) => {
      const client = clientFrom(io, options);
      const print = (event: RunnerEvent): void => io.out(options.json ? JSON.stringify(event) : eventLine(event));
      const controller = new AbortController();
      let finished = false;
      const following = options.follow
        ? client.follow(
            (event) => {
              print(event);
              if (runId && event.type === 'run' && FINISHED_RUN_STATUSES.has(event.run.status)) {
                finished = true;
                controller.abort();
              }
            },
            { runId, signal: controller.signal },
          )
        : undefined;
      if (runId) {
        const { run, steps, attempts } = await client.getRun(runId);
        if (options.json) for (const event of [...steps.map((step) => ({ type: 'step', step }) as const), ...attempts.map((attempt) => ({ type: 'attempt', attempt }) as const), { type: 'run', run } as const]) print(event);
        else for (const line of runStory(run, steps, attempts)) io.out(line);
        if (FINISHED_RUN_STATUSES.has(run.status)) controller.abort();
      } else {
        const { runs } = await client.listRuns({ limit: 20 });
        for (const run of runs.reverse()) print({ type: 'run', run });
      }
      if (!following) return;
      void io.interrupted().then(() => controller.abort());
      await following;
      if (finished && !options.json) io.out('(run finished)');
    });
}
