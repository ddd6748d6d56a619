import { Command, Option } from 'commander';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { eventLine } from '../lib/format.js';
import type { CliIO } from '../lib/io.js';
import { startLocalRunner } from '../lib/local-runner.js';
import { resolveDevToken } from '../lib/token.js';
import { parsePort } from '../lib/parse.js';

/**
 * `wf dev`: the local runner on `.wf/dev.db`. On a terminal it shows the dashboard (tui/), which
 * reads the runner over its own HTTP API like any remote client; with `--no-tui` or when stdout is
 * not a terminal (CI, pipes) it prints a line per run, step and attempt.
 */
export function makeDevCommand(io: CliIO): Command {
  return new Command('dev')
    .description('start the local runner (SQLite in .wf/dev.db) and show runs live')
    .addOption(new Option('-p, --port <port>', 'port of the runner API').default(7766).argParser(parsePort))
    .addOption(new Option('--host <host>', 'address to bind').default('127.0.0.1'))
    .option('--db <path>', 'SQLite file', join('.wf', 'dev.db'))
    .option('--token <token>', 'token apps use (default: WF_TOKEN, the env files, else a generated .wf/token)')
    .option('--no-tui', 'print plain lines instead of the terminal dashboard')
    .action(async (options: { port: number; host: string; db: string; token?: string; tui: boolean }) => {
      // .wf/ holds the token and the database: keep it out of git from the first run.
      mkdirSync(join(io.cwd, '.wf'), { recursive: true });
      writeFileSync(join(io.cwd, '.wf', '.gitignore'), '*\n');
      const { token, source } = resolveDevToken(io.cwd, io.env, options.token);
      const local = await startLocalRunner({ dbPath: resolve(io.cwd, options.db), host: options.host, port: options.port, tokens: [token] });
      if (options.tui && io.isTTY) {
        // Loaded only here, so the plain commands never load React and Ink.
        const { startDashboard } = await import('../../tui/index.js');
        const dashboard = startDashboard({
          runnerUrl: local.url,
          token,
          title: 'wf dev',
          subtitle: `apps need WF_TOKEN=${token} (from ${source}) and WF_RUNNER_URL=${local.url} · SQLite ${options.db}`,
          env: io.env,
        });
        await Promise.race([dashboard.exited, io.interrupted()]);
        dashboard.stop();
        await dashboard.exited;
        io.out('wf dev: stopping…');
        await local.close();
        return;
      }
      const unsubscribe = local.runner.events.subscribe((event) => io.out(eventLine(event)));
      io.out(`wf dev: runner listening on ${local.url} (SQLite ${options.db})`);
      io.out(`wf dev: token from ${source}; apps need WF_TOKEN=${token} and WF_RUNNER_URL=${local.url}`);
      io.out('wf dev: waiting for runs (Ctrl-C stops)');
      await io.interrupted();
      unsubscribe();
      io.out('wf dev: stopping…');
      await local.close();
    });
}
