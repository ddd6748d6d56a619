import { Command } from 'commander';
import type { RunnerEvent } from '../../api/events.js';
import { FINISHED_RUN_STATUSES, type Run } from '../../api/dto.js';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import { eventLine, runStory } from '../lib/format.js';
import type { CliIO } from '../lib/io.js';
import type { RunDetail, RunnerClient } from '../lib/runner-client.js';
import { stepLogLines, stepLogsHint } from '../lib/step-logs.js';
import { CliError } from '../errors.js';

interface LogsOptions {
  runner: string;
  token?: string;
  follow?: boolean;
  json?: boolean;
  step?: string;
}

/** Nothing more will happen to the run: finished, and its alert and failureFunction call (if any) settled. */
function settled(run: Run): boolean {
  return FINISHED_RUN_STATUSES.has(run.status) && run.failureCall !== 'pending' && run.alert !== 'pending';
}

function eventsOf({ run, steps, attempts }: RunDetail): RunnerEvent[] {
  return [
    ...steps.map((step) => ({ type: 'step', step }) as const),
    ...attempts.map((attempt) => ({ type: 'attempt', attempt }) as const),
    { type: 'run', run },
  ];
}

/** The history as events: the 20 newest runs, or one run's steps, attempts and run. */
async function historyEvents(client: RunnerClient, runId: string | undefined): Promise<RunnerEvent[]> {
  if (!runId)
    return (await client.listRuns({ limit: 20 })).runs.reverse().map((run) => ({ type: 'run', run }) as const);
  return eventsOf(await client.getRun(runId));
}

/** The history so far: printed as lines, returned as events so live duplicates can be skipped. */
async function printHistory(
  client: RunnerClient,
  runId: string | undefined,
  json: boolean,
  io: CliIO,
): Promise<{ events: RunnerEvent[]; finished: boolean }> {
  if (!runId) {
    const events = await historyEvents(client, undefined);
    for (const event of events) io.out(json ? JSON.stringify(event) : eventLine(event));
    return { events, finished: false };
  }
  const detail = await client.getRun(runId);
  const events = eventsOf(detail);
  if (json) for (const event of events) io.out(JSON.stringify(event));
  else {
    for (const line of runStory(detail.run, detail.steps, detail.attempts)) io.out(line);
    const hint = stepLogsHint(detail);
    if (hint) io.out(hint);
  }
  return { events, finished: settled(detail.run) };
}

/** Keys of the last events printed, so a snapshot read again after a reconnect prints only what is new. */
class Printed {
  private readonly keys = new Set<string>();
  private readonly limit = 10_000;
  has(key: string): boolean {
    return this.keys.has(key);
  }
  add(key: string): void {
    this.keys.add(key);
    if (this.keys.size > this.limit) this.keys.delete(this.keys.values().next().value!);
  }
}

/** `wf logs [runId]`: one run's story, or every run's events; `--follow` keeps going live. */
export function makeLogsCommand(io: CliIO): Command {
  return withRunnerOptions(new Command('logs'))
    .description('print the log of one run, or of all runs')
    .argument('[runId]', 'the run (wfr_…); all runs when left out')
    .option(
      '-f, --follow',
      'keep printing new events (until the run finishes and its alert and failureFunction are delivered, or Ctrl-C)',
    )
    .option('--json', 'one JSON object per line')
    .option('--step <step>', "one step's detailed logs (what it printed, attempt by attempt): its index or name")
    .action(async (runId: string | undefined, options: LogsOptions) => {
      const client = clientFrom(io, options);
      const json = options.json === true;
      if (options.step !== undefined) {
        if (!runId || options.follow)
          throw new CliError(2, 'USAGE', 'Expected `wf logs <runId> --step <index|name>` (a run id, and no --follow).');
        for (const line of stepLogLines(await client.getRun(runId), options.step, json)) io.out(line);
        return;
      }
      if (!options.follow) return void (await printHistory(client, runId, json, io));
      // The history is read each time the stream opens, before its events are printed, so an
      // event committed in between (such as the run finishing) is never missed; events the
      // history already holds are skipped. After a reconnect only what changed meanwhile prints.
      const controller = new AbortController();
      const printed = new Printed();
      let finished = false;
      const handle = (event: RunnerEvent): void => {
        const key = JSON.stringify(event);
        if (printed.has(key) || finished) return;
        printed.add(key);
        io.out(json ? key : eventLine(event));
        if (runId && event.type === 'run' && settled(event.run)) {
          finished = true;
          controller.abort();
        }
      };
      const resync = async (reconnected: boolean): Promise<void> => {
        if (!reconnected) {
          const history = await printHistory(client, runId, json, io);
          for (const event of history.events) printed.add(JSON.stringify(event));
          if (history.finished) controller.abort();
          return;
        }
        for (const event of await historyEvents(client, runId)) handle(event);
      };
      void io.interrupted().then(() => controller.abort());
      try {
        await client.follow(handle, { runId, signal: controller.signal, onOpen: resync });
      } finally {
        controller.abort();
      }
      if (finished && !json) io.out('(run finished)');
    });
}
