import { Command } from 'commander';
import type { RunnerEvent } from '../../runner-core/events.js';
import { FINISHED_RUN_STATUSES, type Run } from '../../runner-core/store/types.js';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import { eventLine, runStory } from '../lib/format.js';
import type { CliIO } from '../lib/io.js';
import type { RunnerClient } from '../lib/runner-client.js';

interface LogsOptions {
  runner: string;
  token?: string;
  follow?: boolean;
  json?: boolean;
}

/** Nothing more will happen to the run: finished, and its failureFunction call (if any) settled. */
function settled(run: Run): boolean {
  return FINISHED_RUN_STATUSES.has(run.status) && run.failureCall !== 'pending';
}

/** The history so far: printed as lines, returned as events so live duplicates can be skipped. */
async function printHistory(client: RunnerClient, runId: string | undefined, json: boolean, io: CliIO): Promise<{ events: RunnerEvent[]; finished: boolean }> {
  if (!runId) {
    const { runs } = await client.listRuns({ limit: 20 });
    const events = runs.reverse().map((run) => ({ type: 'run', run }) as const);
    for (const event of events) io.out(json ? JSON.stringify(event) : eventLine(event));
    return { events, finished: false };
  }
  const { run, steps, attempts } = await client.getRun(runId);
  const events: RunnerEvent[] = [...steps.map((step) => ({ type: 'step', step }) as const), ...attempts.map((attempt) => ({ type: 'attempt', attempt }) as const), { type: 'run', run }];
  if (json) for (const event of events) io.out(JSON.stringify(event));
  else for (const line of runStory(run, steps, attempts)) io.out(line);
  return { events, finished: settled(run) };
}

/** `wf logs [runId]`: one run's story, or every run's events; `--follow` keeps going live. */
export function makeLogsCommand(io: CliIO): Command {
  return withRunnerOptions(new Command('logs'))
    .description('print the log of one run, or of all runs')
    .argument('[runId]', 'the run (wfr_…); all runs when left out')
    .option('-f, --follow', 'keep printing new events (until the run finishes and its failureFunction is delivered, or Ctrl-C)')
    .option('--json', 'one JSON object per line')
    .action(async (runId: string | undefined, options: LogsOptions) => {
      const client = clientFrom(io, options);
      const json = options.json === true;
      if (!options.follow) return void (await printHistory(client, runId, json, io));
      // Subscribe first and read the history once the stream is open, so an event committed
      // in between (such as the run finishing) is never missed. Events that arrive before the
      // history is printed wait, and are skipped when the history already holds them.
      const controller = new AbortController();
      let early: RunnerEvent[] | undefined = [];
      let finished = false;
      const handle = (event: RunnerEvent): void => {
        if (early) return void early.push(event);
        io.out(json ? JSON.stringify(event) : eventLine(event));
        if (runId && event.type === 'run' && settled(event.run)) {
          finished = true;
          controller.abort();
        }
      };
      let opened!: () => void;
      const open = new Promise<void>((resolve) => (opened = resolve));
      const following = client.follow(handle, { runId, signal: controller.signal, onOpen: opened });
      void io.interrupted().then(() => controller.abort());
      try {
        await Promise.race([open, following]);
        if (controller.signal.aborted) return;
        const history = await printHistory(client, runId, json, io);
        if (history.finished) return;
        const seen = new Set(history.events.map((event) => JSON.stringify(event)));
        const pending = early.filter((event) => !seen.has(JSON.stringify(event)));
        early = undefined;
        for (const event of pending) handle(event);
        await following;
      } finally {
        controller.abort();
        await following.catch(() => {});
      }
      if (finished && !json) io.out('(run finished)');
    });
}
