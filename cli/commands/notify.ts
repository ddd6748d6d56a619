import { Command } from 'commander';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import type { CliIO } from '../lib/io.js';
import { parseJsonText } from '../lib/parse.js';

/** `wf notify <eventId> [--data json]`: what `client.notify` does, from the shell. */
export function makeNotifyCommand(io: CliIO): Command {
  return withRunnerOptions(new Command('notify'))
    .description('deliver an event to the runs waiting for it (context.waitForEvent)')
    .argument('<eventId>', 'the event id the workflow waits for')
    .option('-d, --data <json>', 'event data (JSON)', parseJsonText)
    .option('--json', 'print the answer as JSON')
    .action(async (eventId: string, options: { runner: string; token?: string; data?: string; json?: boolean }) => {
      const data = options.data === undefined ? undefined : (JSON.parse(options.data) as unknown);
      const result = await clientFrom(io, options).notify(eventId, data);
      if (options.json) return io.out(JSON.stringify(result));
      io.out(
        result.delivered.length > 0
          ? `delivered to ${result.delivered.length} run${result.delivered.length === 1 ? '' : 's'}: ${result.delivered.join(' ')}`
          : 'no run waits for it yet: kept for the next waitForEvent with this id',
      );
    });
}
