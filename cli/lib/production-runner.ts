import type { Server } from 'node:http';
import { resolve } from 'node:path';
import { isLoopbackHost } from '../../runner-core/api/http-io.js';
import { createRunner } from '../../runner-core/create-runner.js';
import { DatabaseOpenError, RunnerConfigError } from '../../runner-core/errors.js';
import type { AlertOptions } from '../../runner-core/alerts/options.js';
import type { Logger } from '../../runner-core/telemetry/logger.js';
import type { UpstashSigningKeys } from '../../runner-core/qstash/signing-keys.js';
import type { Runner } from '../../runner-core/runner.js';
import type { OtelConfig } from '../../runner-core/telemetry/otel-config.js';
// The runner's public surface (wfkit-cli/runner), not its store: only runner-core names the store.
import { parseDatabaseUrl, type DatabaseLocation } from '../../runner-core/index.js';
import { CliError } from '../errors.js';
import { listenError } from './listen.js';
import { assertStrongTokens } from './token-strength.js';

export interface ProductionRunnerOptions {
  /** `postgres://…` (several runners share it) or a SQLite file path (one runner). */
  database: string;
  /** Relative SQLite paths are resolved against this folder. */
  cwd: string;
  host: string;
  port: number;
  tokens: string[];
  /** @default RUNNER_DEFAULTS.leaseMs (runner-options.ts) */
  leaseMs?: number;
  /** @default RUNNER_DEFAULTS.concurrency (runner-options.ts) */
  concurrency?: number;
  /** `--calls-per-origin`: the egress gate's share per call target's origin. @default 32 */
  callsPerOrigin?: number | undefined;
  /** Header names redacted besides the built-in credential headers. */
  redactHeaders?: readonly string[];
  /** Where each of `tokens` was set (`WF_TOKENS entry 2`), for a refusal's message. @default "token 1", … */
  tokenNames?: readonly string[];
  /**
   * On a loopback bind, reads and the dashboard's cancel/rerun need no token (`wf dev`; `wf start
   * --open-loopback`). Unsafe behind a reverse proxy that rewrites Host. @default false
   */
  openOnLoopback?: boolean;
  /**
   * The process is this runner's (`wf start`): the API's node adapter may swap the global `Request`
   * and `Response` for its lightweight ones (runner-core/api/server.ts, `ownsGlobals`). @default false
   */
  ownsGlobals?: boolean;
  /** Origins the runner may call (`--allow-origin`, `WF_ALLOWED_ORIGINS`); at least one. */
  allowedOrigins: string[];
  /** Delete finished runs this long after they finished; 0 keeps them. @default 0 */
  retentionMs?: number;
  /** How long an app may stay unreachable before its runs fail. @default 24 h */
  unreachableHorizonMs?: number;
  /** How long the runner waits for a drive response's headers. @default 30 s */
  driveTimeoutMs?: number;
  /** Where the runner logs failed drives, lost leases, failed polls. @default console */
  logger?: Logger;
  /** Export OpenTelemetry traces here (`--otel-endpoint`, OTEL_*). @default no traces */
  otel?: OtelConfig;
  /** Failure alerts (`--alert-webhook`, `alertOptions`); off when absent. */
  alerts?: AlertOptions;
  /** Keys Upstash-protocol deliveries are signed with (QSTASH_CURRENT/NEXT_SIGNING_KEY). */
  upstashSigningKeys?: UpstashSigningKeys;
  /** `--upstash-max-retries`. @default 100 */
  upstashMaxRetries?: number | undefined;
  /** `--upstash-max-message-size`, in bytes. @default 10 MiB */
  upstashMaxMessageSize?: number | undefined;
}

export interface ProductionRunner {
  runner: Runner;
  server: Server;
  url: string;
  store: DatabaseLocation['kind'];
  /** The database, password redacted, for the log. */
  database: string;
  /** The origins this runner calls, as configured. */
  allowedOrigins: readonly string[];
  /** Stops accepting connections, gives in-flight drives `graceMs` to finish, releases the rest, closes the store. */
  close(graceMs: number): Promise<void>;
}

/**
 * `wf start`: the CLI's checks (token strength off loopback, origins given, the database value)
 * over runner-core's `createRunner`, which opens the store (SQLite or PostgreSQL), runs the runner
 * and serves its API, the web dashboard and `/metrics`. On SQLite this runner is the file's only user (`exclusive`: it takes a
 * killed predecessor's runs back at once); on PostgreSQL it is one of several, and leases end only
 * by expiry.
 */
export async function startProductionRunner(options: ProductionRunnerOptions): Promise<ProductionRunner> {
  if (!isLoopbackHost(options.host) && options.tokens.length === 0) {
    throw new CliError(
      2,
      'INSECURE',
      `Refusing to listen on ${options.host} without a token: set WF_TOKENS (or WF_TOKEN), or bind to 127.0.0.1.`,
    );
  }
  if (!isLoopbackHost(options.host)) {
    assertStrongTokens(
      options.tokens.map((token, i) => ({ token, name: options.tokenNames?.[i] ?? `token ${i + 1}` })),
      options.host,
    );
  }
  if (options.tokens.length === 0) {
    throw new CliError(
      2,
      'NO_TOKEN',
      'wf start needs a token to check apps and sign drive requests with: set WF_TOKENS (several, comma or space separated, for rotation) or WF_TOKEN.',
    );
  }
  if (options.allowedOrigins.length === 0) {
    throw new CliError(
      2,
      'NO_ORIGINS',
      'wf start needs the origins of the apps it may call: WF_ALLOWED_ORIGINS=https://app.example.com (several comma or space separated;' +
        ' https://*.example.com for subdomains, http://127.0.0.1:* for any port), or --allow-origin <pattern> (repeatable).',
    );
  }
  let location: DatabaseLocation;
  try {
    location = parseDatabaseUrl(options.database);
  } catch (error) {
    throw new CliError(2, 'DATABASE', (error as Error).message, { cause: error });
  }
  const target =
    location.kind === 'sqlite' && location.path !== ':memory:' ? resolve(options.cwd, location.path) : options.database;
  const started = await createRunner({
    database: target,
    tokens: options.tokens,
    leaseMs: options.leaseMs,
    concurrency: options.concurrency,
    ...(options.retentionMs !== undefined && { retention: options.retentionMs }),
    ...(options.callsPerOrigin !== undefined && { egress: { perOrigin: options.callsPerOrigin } }),
    redactHeaders: options.redactHeaders,
    allowedOrigins: options.allowedOrigins,
    logger: options.logger,
    ...(options.upstashSigningKeys && { upstashSigningKeys: options.upstashSigningKeys }),
    upstashLimits: {
      ...(options.upstashMaxRetries !== undefined && { maxRetries: options.upstashMaxRetries }),
      ...(options.upstashMaxMessageSize !== undefined && { maxMessageBytes: options.upstashMaxMessageSize }),
    },
    host: options.host,
    port: options.port,
    api: { openOnLoopback: options.openOnLoopback, ownsGlobals: options.ownsGlobals === true },
    ...(options.otel && { otel: options.otel }),
    ...(options.unreachableHorizonMs !== undefined && { unreachable: { horizonMs: options.unreachableHorizonMs } }),
    ...(options.driveTimeoutMs !== undefined && { dispatch: { headersTimeoutMs: options.driveTimeoutMs } }),
    ...(options.alerts && { alerts: options.alerts }),
  }).catch((error: unknown) => {
    throw toCliError(error, options);
  });
  return {
    runner: started.runner,
    server: started.server,
    url: started.url,
    store: location.kind,
    database: started.database!,
    allowedOrigins: options.allowedOrigins,
    close: (graceMs) => started.close(graceMs),
  };
}

/** createRunner's failures as the CLI reports them (exit code, code, one line). */
function toCliError(error: unknown, options: ProductionRunnerOptions): unknown {
  if (error instanceof DatabaseOpenError) return new CliError(1, 'DATABASE', error.message, { cause: error });
  if (error instanceof RunnerConfigError) return new CliError(2, 'CONFIG', error.message, { cause: error });
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && (error as NodeJS.ErrnoException).syscall === 'listen')
    return listenError(error as NodeJS.ErrnoException, options.host, options.port);
  return error;
}
