import { Argument, Command, Option } from 'commander';
import { BULK_ACTIONS, isEmptyFilter, type BulkActionName, type BulkFilter } from '../../api/bulk.js';
import { RUN_STATUSES, type RunStatus } from '../../api/dto.js';
import { CliError } from '../errors.js';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import type { CliIO } from '../lib/io.js';
import { collectStatuses, parseTimeFlag } from '../lib/parse.js';
import { terminalSafe } from '../../view/terminal-text.js';

interface BulkOptions {
  runner: string;
  token?: string;
  status?: RunStatus[];
  url?: string;
  urlPrefix?: string;
  failedStep?: string;
  id?: string;
  since?: string;
  until?: string;
  yes?: boolean;
  all?: boolean;
}

/** `wf bulk <resume|cancel|rerun>`: counts the matching runs first, then asks (or takes `--yes`). */
export function makeBulkCommand(io: CliIO): Command {
  return withRunnerOptions(new Command('bulk'))
    .description('resume, cancel or rerun every run a filter matches (at most 10,000 a call)')
    .addArgument(new Argument('<action>', 'what to do with each run').choices(BULK_ACTIONS))
    .addOption(
      new Option(
        '--status <status>',
        `only runs in this status; several comma-separated (${RUN_STATUSES.join(', ')})`,
      ).argParser(collectStatuses),
    )
    .option('--url <url>', 'only runs of this workflow URL')
    .option('--url-prefix <prefix>', 'only runs whose workflow URL starts with this')
    .option('--failed-step <name>', 'only runs where a step of this name failed')
    .option('--id <prefix>', 'only runs whose id starts with this')
    .option('--since <time>', 'only runs created since (a duration ago like 2h, or a date)')
    .option('--until <time>', 'only runs created before (a duration ago, or a date)')
    .option('--yes', 'do not ask for confirmation (scripts)')
    .option('--all', 'allow an empty filter: every run')
    .action(async (action: BulkActionName, options: BulkOptions) => {
      const now = Date.now();
      const filter: BulkFilter = {};
      if (options.status !== undefined && options.status.length > 0)
        filter.status = options.status.length === 1 ? options.status[0]! : options.status;
      if (options.url !== undefined) filter.url = options.url;
      if (options.urlPrefix !== undefined) filter.urlPrefix = options.urlPrefix;
      if (options.failedStep !== undefined) filter.failedStep = options.failedStep;
      if (options.id !== undefined) filter.idPrefix = options.id;
      if (options.since !== undefined) filter.createdAfter = parseTimeFlag(options.since, '--since', now);
      if (options.until !== undefined) filter.createdBefore = parseTimeFlag(options.until, '--until', now);
      if (isEmptyFilter(filter) && !options.all) {
        throw new CliError(
          2,
          'NO_FILTER',
          `Expected a filter (--status, --url, --url-prefix, --since, --until, --failed-step or --id) for wf bulk ${action}, got none: pass --all to act on every run.`,
        );
      }
      const client = clientFrom(io, options);
      const { matched, truncated } = await client.bulk({ action, filter, dryRun: true });
      const count = `${matched}${truncated ? ' (the first 10,000; run again for the rest)' : ''} run${matched === 1 ? '' : 's'}`;
      if (matched === 0) {
        io.out(`No runs match; nothing to ${action}.`);
        return;
      }
      if (!options.yes) {
        if (!io.isTTY || !io.ask)
          throw new CliError(
            2,
            'NOT_CONFIRMED',
            `${count} match. Expected --yes to ${action} them without a terminal to confirm on.`,
          );
        const answer = await io.ask(`${action} ${count}? [y/N] `);
        if (!/^y(es)?$/i.test(answer.trim())) {
          io.out('Nothing done.');
          return;
        }
      }
      const result = await client.bulk({ action, filter });
      io.out(
        `${action}: ${result.done} of ${result.matched} done${result.failed.length > 0 ? `, ${result.failed.length} refused` : ''}`,
      );
      for (const failure of result.failed)
        io.out(terminalSafe(`  ${failure.runId} ${failure.code}: ${failure.message}`));
    });
}
