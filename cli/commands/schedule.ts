import { Command } from 'commander';
import type { Schedule } from '../../api/schedule-dto.js';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import type { CliIO } from '../lib/io.js';
import { parseJsonText } from '../lib/parse.js';
import { terminalSafe } from '../../view/terminal-text.js';

type RunnerFlags = { runner: string; token?: string };

/** One line per schedule: id, next fire, last fire, zone, cron, url; and its last refused tick, if any. */
export function scheduleLine(s: Schedule): string {
  const last = s.lastFiredAt === null ? 'never' : new Date(s.lastFiredAt).toISOString();
  const refused = s.lastRefusal
    ? `  (tick ${new Date(s.lastRefusal.tick).toISOString()} refused: ${s.lastRefusal.code})`
    : '';
  return terminalSafe(
    `${s.id}  next ${new Date(s.nextAt).toISOString()}  last ${last}  ${s.timezone}  "${s.cron}"  ${s.url}${refused}`,
  );
}

/** `wf schedule add|list|rm`: cron schedules that start a workflow route with a body. */
export function makeScheduleCommand(io: CliIO): Command {
  const schedule = new Command('schedule').description('cron schedules that start a workflow route');
  schedule.addCommand(
    withRunnerOptions(new Command('add'))
      .description('start <url> on a cron schedule (5 fields, or 6 with leading seconds)')
      .argument('<url>', 'the workflow route, e.g. http://localhost:3000/workflow')
      .requiredOption('--cron <expr>', "cron expression, e.g. '0 9 * * 1-5'")
      .option('-d, --data <json>', 'JSON payload every run gets', parseJsonText)
      .option('--timezone <zone>', 'IANA time zone the cron is read in (default UTC)')
      .action(async (url: string, options: RunnerFlags & { cron: string; data?: string; timezone?: string }) => {
        const created = await clientFrom(io, options).createSchedule({
          url,
          cron: options.cron,
          body: options.data,
          timezone: options.timezone,
          headers: { 'content-type': 'application/json' },
        });
        io.out(scheduleLine(created));
      }),
  );
  schedule.addCommand(
    withRunnerOptions(new Command('list'))
      .description('list schedules with their next fire time')
      .option('--json', 'one JSON object per line')
      .action(async (options: RunnerFlags & { json?: boolean }) => {
        const schedules = await clientFrom(io, options).listSchedules();
        if (schedules.length === 0 && !options.json) io.out('no schedules');
        for (const s of schedules) io.out(options.json ? JSON.stringify(s) : scheduleLine(s));
      }),
  );
  schedule.addCommand(
    withRunnerOptions(new Command('rm'))
      .description('delete a schedule (the runs it started stay)')
      .argument('<id>', 'the schedule (wfs_…)')
      .action(async (id: string, options: RunnerFlags) => {
        await clientFrom(io, options).deleteSchedule(id);
        io.out(`${id} deleted`);
      }),
  );
  return schedule;
}
