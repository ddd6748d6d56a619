import { Command, Option } from 'commander';
import type { RunStatus } from '../../api/dto.js';
import type { RunListQuery } from '../../api/run-query.js';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import { formatDuration } from '../../view/duration.js';
import { glyph, RUN_STATUSES } from '../../view/status.js';
import { time } from '../lib/format.js';
import { terminalSafe } from '../../view/terminal-text.js';
import type { CliIO } from '../lib/io.js';
import { collectStatuses, parsePositiveInt, parseTimeFlag } from '../lib/parse.js';

interface RunsOptions {
  runner: string;
  token?: string;
  status?: RunStatus[];
  url?: string;
  urlPrefix?: string;
  since?: string;
  until?: string;
  failedStep?: string;
  id?: string;
  limit: number;
  cursor?: string;
  json?: boolean;
}

/** The flags as the API's list query (the runner does the filtering, on its indexes). */
function toQuery(options: RunsOptions, now: number): RunListQuery {
  const query: RunListQuery = { limit: options.limit };
  if (options.status !== undefined && options.status.length > 0) query.status = options.status;
  if (options.url !== undefined) query.url = options.url;
  if (options.urlPrefix !== undefined) query.urlPrefix = options.urlPrefix;
  if (options.since !== undefined) query.createdAfter = parseTimeFlag(options.since, '--since', now);
  if (options.until !== undefined) query.createdBefore = parseTimeFlag(options.until, '--until', now);
  if (options.failedStep !== undefined) query.failedStep = options.failedStep;
  if (options.id !== undefined) query.idPrefix = options.id;
  if (options.cursor !== undefined) query.cursor = options.cursor;
  return query;
}

/** `wf runs`: the newest runs, one per line, optionally filtered. */
export function makeRunsCommand(io: CliIO): Command {
  return withRunnerOptions(new Command('runs'))
    .description('list runs, newest first (filters combine: every one given must match)')
    .addOption(
      new Option(
        '-s, --status <status>',
        `only runs in this status; several comma-separated or repeated (${RUN_STATUSES.join(', ')})`,
      ).argParser(collectStatuses),
    )
    .option('--url <url>', 'only runs of this workflow URL, exactly')
    .option('--url-prefix <prefix>', 'only runs whose workflow URL starts with this')
    .option('--since <time>', 'only runs created since (a duration ago like 2h, or a date)')
    .option('--until <time>', 'only runs created before (a duration ago, or a date)')
    .option('--failed-step <name>', 'only runs where a step of this name failed')
    .option('--id <prefix>', 'only runs whose id starts with this')
    .addOption(new Option('-n, --limit <n>', 'how many').default(20).argParser(parsePositiveInt))
    .option('--cursor <runId>', 'continue after this run id (from a previous page)')
    .option('--json', 'print the page as JSON')
    .action(async (options: RunsOptions) => {
      const query = toQuery(options, Date.now());
      const page = await clientFrom(io, options).listRuns(query);
      if (options.json) return io.out(JSON.stringify(page));
      if (page.runs.length === 0) return io.out(Object.keys(query).length > 1 ? 'No runs match.' : 'No runs yet.');
      for (const run of page.runs) {
        const took = run.finishedAt ? formatDuration(run.finishedAt - run.createdAt) : '';
        io.out(
          `${glyph(run.status)} ${run.id}  ${run.status.padEnd(9)} ${String(run.stepsDone).padStart(3)} steps  ${time(run.createdAt)}  ${took.padStart(8)}  ${terminalSafe(run.url)}`,
        );
      }
      // The next page keeps the filters: the same command with --cursor.
      if (page.nextCursor) io.out(`… more: ${nextPageCommand(options, page.nextCursor)}`);
    });
}

/** The command for the next page: the filters as typed (times too, so "2h" stays relative), a new cursor. */
function nextPageCommand(options: RunsOptions, cursor: string): string {
  const quote = (value: string): string =>
    /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
  const parts = ['wf runs'];
  if (options.status !== undefined && options.status.length > 0) parts.push(`--status ${options.status.join(',')}`);
  const flags: [keyof RunsOptions, string][] = [
    ['url', '--url'],
    ['urlPrefix', '--url-prefix'],
    ['since', '--since'],
    ['until', '--until'],
    ['failedStep', '--failed-step'],
    ['id', '--id'],
  ];
  for (const [key, flag] of flags) if (options[key] !== undefined) parts.push(`${flag} ${quote(String(options[key]))}`);
  if (options.limit !== 20) parts.push(`-n ${options.limit}`);
  parts.push(`--cursor ${cursor}`);
  return parts.join(' ');
}
