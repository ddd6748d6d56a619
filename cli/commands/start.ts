import { Command, Option } from 'commander';
import ms from 'ms';
import { join } from 'node:path';
import type { CliIO } from '../lib/io.js';
import { createLogger, type LogFormat } from '../lib/logger.js';
import { parseNonNegativeInt, parsePort, parsePositiveInt } from '../lib/parse.js';
import { startProductionRunner } from '../lib/production-runner.js';
import { RUNNER_DEFAULTS } from '../../runner-core/runner-options.js';
import { redactHeaderNames, redactHeaderOption } from '../lib/redact-headers.js';
import { alertOptions } from '../lib/alert-flags.js';
import { addRunnerFlags, allowedOriginsFromEnv, otelFromFlags, type RunnerFlags } from '../lib/runner-flags.js';
import { leaseMsFromEnv, namedTokensFromEnv } from '../lib/start-env.js';
import { addUpstashKeyFlags, configuredUpstashKeys, type UpstashKeyFlags } from '../lib/upstash-keys.js';
import { retentionOption, START_RETENTION_MS } from '../lib/retention-flag.js';

interface StartOptions extends RunnerFlags, UpstashKeyFlags {
  host: string;
  port: number;
  database?: string;
  logFormat: LogFormat;
  leaseMs?: number;
  graceMs: number;
  concurrency: number;
  callsPerOrigin?: number;
  redactHeader: string[];
  openLoopback?: boolean;
  retention: number;
}

/**
 * `wf start`: the production runner. SQLite by default (one runner); with a PostgreSQL URL several
 * `wf start` processes, on one machine or many, share the work. Tokens come from the environment
 * only (WF_TOKENS / WF_TOKEN), never argv, which other users of the machine can read.
 */
export function makeStartCommand(io: CliIO): Command {
  const command = new Command('start')
    .description(
      'the production runner: API, web dashboard and /metrics on SQLite, or on PostgreSQL shared by several runners',
    )
    .addOption(
      new Option(
        '--host <host>',
        'address to bind (a non-loopback address needs strong tokens, 128 bits or more, in WF_TOKENS or WF_TOKEN)',
      ).default('127.0.0.1'),
    )
    .addOption(new Option('-p, --port <port>', 'port of the runner API').default(7766).argParser(parsePort))
    .option(
      '--database <url>',
      `postgres://… (several runners), or a SQLite file (default: WF_DATABASE_URL, else ${join('.wf', 'runner.db')})`,
    )
    .addOption(
      new Option('--log-format <format>', 'log lines for people or for log shippers')
        .choices(['text', 'json'])
        .default('text'),
    )
    .addOption(
      new Option(
        '--lease-ms <ms>',
        "how long a run stays this runner's without renewal; another runner takes it over after (default: WF_LEASE_MS, else 15000)",
      ).argParser(parsePositiveInt),
    )
    .addOption(
      new Option(
        '--grace-ms <ms>',
        'on SIGTERM, how long in-flight drives may finish before they are released to other runners',
      )
        .default(10_000)
        .argParser(parseNonNegativeInt),
    )
    .addOption(
      new Option('--concurrency <n>', 'drive requests in flight at once')
        .default(RUNNER_DEFAULTS.concurrency)
        .argParser(parsePositiveInt),
    )
    .addOption(
      new Option(
        '--calls-per-origin <n>',
        "context.call requests in flight at once to one target's origin (default 32); more wait, shown as waiting for a slot",
      ).argParser(parsePositiveInt),
    )
    .addOption(redactHeaderOption())
    .addOption(retentionOption(START_RETENTION_MS))
    .option(
      '--open-loopback',
      "on a loopback --host, serve reads and the dashboard's cancel/rerun without the token, as `wf dev` does (unsafe behind a reverse proxy that rewrites Host)",
    );
  return addRunnerFlags(
    addUpstashKeyFlags(command),
    'an origin the runner may call (repeatable; also WF_ALLOWED_ORIGINS): https://app.example.com, https://*.example.com, http://127.0.0.1:*',
  ).action(async (options: StartOptions) => {
    const log = createLogger(options.logFormat, io);
    // Listen for SIGTERM/SIGINT before starting, so a stop during startup still shuts down cleanly.
    const interrupted = io.interrupted();
    const named = namedTokensFromEnv(io.env);
    const otel = otelFromFlags(options, io.env);
    const upstash = configuredUpstashKeys(io.env, options);
    const started = await startProductionRunner({
      database: options.database ?? (io.env.WF_DATABASE_URL || join('.wf', 'runner.db')),
      cwd: io.cwd,
      host: options.host,
      port: options.port,
      tokens: named.map(({ token }) => token),
      tokenNames: named.map(({ name }) => name),
      leaseMs: options.leaseMs ?? leaseMsFromEnv(io.env),
      concurrency: options.concurrency,
      retentionMs: options.retention,
      callsPerOrigin: options.callsPerOrigin,
      redactHeaders: redactHeaderNames(options.redactHeader, io.env),
      openOnLoopback: options.openLoopback === true,
      // This process is the runner's: its API answers skip a web stream each (server.ts).
      ownsGlobals: true,
      allowedOrigins: [...options.allowOrigin, ...allowedOriginsFromEnv(io.env)],
      unreachableHorizonMs: options.unreachableHorizon,
      driveTimeoutMs: options.driveTimeout,
      otel,
      alerts: alertOptions(options, io.env),
      // The runner's own lines (a failed drive, a lost lease) in this log's format.
      logger: log,
      upstashSigningKeys: upstash?.keys,
      upstashMaxRetries: options.upstashMaxRetries,
      upstashMaxMessageSize: options.upstashMaxMessageSize,
    });
    const { runner } = started;
    log.info(`listening on ${started.url}`, {
      url: started.url,
      store: started.store,
      database: started.database,
      runner: runner.owner,
      tokens: runner.tokens.size,
      origins: started.allowedOrigins.join(' '),
      dashboard: `${started.url}/`,
      retention: options.retention === 0 ? 'forever' : ms(options.retention),
      ...(otel && { traces: `${otel.endpoint} (${otel.protocol})` }),
      upstashSigningKeys: upstash
        ? `from ${upstash.source}`
        : 'derived from the first token (set QSTASH_CURRENT_SIGNING_KEY and QSTASH_NEXT_SIGNING_KEY to choose them)',
    });
    // The webhook's origin only: its path may be its secret (a Slack incoming webhook's is).
    if (runner.alerts)
      log.info(`alerting failed runs to ${runner.alerts.webhook.origin}`, {
        alertWebhook: runner.alerts.webhook.origin,
        publicUrl: runner.alerts.publicUrl,
        signedWith: io.env.WF_ALERT_SECRET ? 'WF_ALERT_SECRET' : 'the token',
      });
    await interrupted;
    log.info('stopping: no new connections, in-flight drives finish or are released', {
      inFlight: runner.drivesInFlight,
      graceMs: options.graceMs,
    });
    await started.close(options.graceMs);
    log.info('stopped');
  });
}
