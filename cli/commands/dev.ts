import { Command, InvalidArgumentError, Option } from 'commander';
import { join } from 'node:path';
import { runDev, type DevOptions } from '../lib/dev-run.js';
import type { CliIO } from '../lib/io.js';
import { parseFlagUrl, parsePort, parsePositiveInt } from '../lib/parse.js';
import { redactHeaderOption } from '../lib/redact-headers.js';
import { addRunnerFlags } from '../lib/runner-flags.js';
import { DEV_RETENTION_MS, retentionOption } from '../lib/retention-flag.js';
import { addUpstashKeyFlags } from '../lib/upstash-keys.js';

function parseRoute(value: string): string {
  if (!value.startsWith('/')) throw new InvalidArgumentError(`Expected a path starting with /, got "${value}".`);
  return value;
}

/** An http(s) URL flag (`parseFlagUrl`) without its trailing slashes. */
function parseHttpUrl(value: string): string {
  return parseFlagUrl(value).replace(/\/+$/, '');
}

/**
 * `wf dev [-- <app dev command>]`: the local runner on `.wf/dev.db` (or `--remote`), the app's own
 * dev command (after `--`, else package.json's `"wfkit": { "dev" }`), a public tunnel with
 * `--tunnel`, and a check that the app's route answers. On a terminal it shows the dashboard
 * (tui/) with the app's output in a log pane; with `--no-tui` or when stdout is not a terminal it
 * prints a line per run, step and attempt, and the app's output as `[app] …` lines.
 */
export function makeDevCommand(io: CliIO): Command {
  const command = new Command('dev')
    .description('start the local runner and the app, check the app, show runs live (Ctrl-C stops all)')
    .argument('[command...]', 'the app\'s dev command, after -- (default: "wfkit": { "dev" } in package.json)')
    .addOption(new Option('-p, --port <port>', 'port of the runner API').default(7766).argParser(parsePort))
    .addOption(new Option('--host <host>', 'address to bind').default('127.0.0.1'))
    .option('--db <path>', 'SQLite file', join('.wf', 'dev.db'))
    .option('--token <token>', 'token apps use (default: WF_TOKEN, the env files, else a generated .wf/token)')
    .option('--no-tui', 'print plain lines instead of the terminal dashboard')
    .addOption(
      new Option('--app-port <port>', 'port of the app\'s dev server (default: "wfkit": { "port" })').argParser(
        parsePort,
      ),
    )
    .addOption(
      new Option('--route <path>', 'path of the workflow route (default: "wfkit": { "route" })').argParser(parseRoute),
    )
    .option('--no-app', "do not start package.json's dev command (check an app started elsewhere)")
    .addOption(
      new Option('--app-wait <seconds>', "how long to wait for the app's port before saying nothing listens")
        .default(60)
        .argParser(parsePositiveInt),
    )
    .option('--tunnel', 'open a public tunnel to the app (localtunnel) and give the app its URL as WF_WORKFLOW_URL')
    .addOption(
      new Option('--tunnel-host <url>', 'a self-hosted localtunnel server (implies --tunnel)').argParser(parseHttpUrl),
    )
    .option('--subdomain <name>', 'ask the tunnel service for this name (implies --tunnel)')
    .addOption(
      new Option('--remote <url>', 'use the runner at this URL (a `wf start`) instead of starting one').argParser(
        parseHttpUrl,
      ),
    )
    .addOption(redactHeaderOption())
    .addOption(retentionOption(DEV_RETENTION_MS))
    .option(
      '--write-upstash-env',
      'for an Upstash Workflow app, write QSTASH_URL, QSTASH_TOKEN, the signing keys and UPSTASH_WORKFLOW_URL into its env file (.env.local, .dev.vars or .env)',
    );
  return addRunnerFlags(
    addUpstashKeyFlags(command),
    "an origin the local runner may call besides localhost, 127.0.0.1 and [::1] on any port, and the tunnel's (repeatable)",
  ).action((argv: string[], options: DevOptions) => runDev(io, argv, options));
}
