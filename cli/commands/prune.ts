import { setTimeout as sleep } from 'node:timers/promises';
import { Command, Option } from 'commander';
import { addPruneCounts, emptyPruneCounts, type PruneCounts } from '../../api/prune.js';
import { CliError } from '../errors.js';
import { clientFrom, withRunnerOptions } from '../lib/client-options.js';
import type { CliIO } from '../lib/io.js';
import { parseRetention } from '../lib/retention-flag.js';

interface PruneOptions {
  runner: string;
  token?: string;
  olderThan: number;
  dryRun?: boolean;
}

/** Runs per request: a request stays short, and the progress line moves every few thousand runs. */
const RUNS_PER_CALL = 5_000;
/** How long to wait for another runner's prune to end before giving up, and how often to look. */
const BUSY_WAIT_MS = 60_000;
const BUSY_POLL_MS = 500;

function describeCounts(c: PruneCounts): string {
  return `${c.runs} run${c.runs === 1 ? '' : 's'} (${c.steps} steps, ${c.attempts} attempts, ${c.stepLogs} step logs, ${c.messages} QStash messages, ${c.waits} QStash waits)`;
}

/** `wf prune --older-than 30d [--dry-run]`: retention on demand, through the runner's API (`POST /v1/prune`). */
export function makePruneCommand(io: CliIO): Command {
  return withRunnerOptions(new Command('prune'))
    .description(
      'delete runs that finished longer ago than --older-than and owe nothing, with their steps, attempts, logs and QStash messages',
    )
    .addOption(
      new Option(
        '--older-than <duration>',
        'runs that finished at least this long ago: 30d, 12h, 90m (0: every finished run)',
      )
        .argParser((value) => parseRetention(value, '--older-than', 'prune every finished run'))
        .makeOptionMandatory(),
    )
    .option('--dry-run', 'only count what would be deleted')
    .action(async (options: PruneOptions) => {
      const client = clientFrom(io, options);
      const dryRun = options.dryRun === true;
      let totals = emptyPruneCounts();
      let cursor: string | undefined;
      let busySince: number | undefined;
      for (;;) {
        const answer = await client.prune({
          olderThanMs: options.olderThan,
          ...(dryRun && { dryRun }),
          ...(cursor !== undefined && { cursor }),
          maxRuns: RUNS_PER_CALL,
        });
        if (answer.busy) {
          if (busySince === undefined) io.err('Another runner of this database is pruning; waiting for it to finish…');
          busySince ??= Date.now();
          if (Date.now() - busySince > BUSY_WAIT_MS)
            throw new CliError(
              1,
              'BUSY',
              `Another runner kept pruning this database for ${BUSY_WAIT_MS / 1000} s; try again later.`,
            );
          await sleep(BUSY_POLL_MS);
          continue;
        }
        busySince = undefined;
        totals = addPruneCounts(totals, answer);
        if (answer.cursor === null) break;
        cursor = answer.cursor;
        io.err(`… ${dryRun ? 'counted' : 'pruned'} ${totals.runs} runs so far`);
      }
      io.out(
        dryRun
          ? `Would prune ${describeCounts(totals)}; nothing was deleted (--dry-run).`
          : `Pruned ${describeCounts(totals)}.`,
      );
      if (totals.kept > 0)
        io.out(
          `Kept ${totals.kept} finished run${totals.kept === 1 ? '' : 's'} that still owe a QStash failure callback.`,
        );
    });
}
