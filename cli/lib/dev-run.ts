import { eventDto } from '../../runner-core/api/dto-map.js';
import { qstashToken } from '../../runner-core/qstash/qstash-token.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createLogFeed, type LogFeed } from '../../tui/log-feed.js';
import { httpDataSource } from '../../tui/data-source.js';
import { CliError } from '../errors.js';
import { readAppDevConfig, resolveAppSpec, type AppSpec } from './app-config.js';
import { readAppPackage } from './scaffold.js';
import { reportTunnel, startAppSession, type DevReporter } from './dev-session.js';
import { eventLine } from './format.js';
import type { CliIO } from './io.js';
import { alertOptions } from './alert-flags.js';
import { startLocalRunner, type LocalRunner } from './local-runner.js';
import { redactHeaderNames } from './redact-headers.js';
import { otelFromFlags, type RunnerFlags } from './runner-flags.js';
import { checkRemoteRunner } from './remote-runner.js';
import { findClientToken, resolveDevToken, type ResolvedToken } from './token.js';
import { DEFAULT_TUNNEL_HOST, openTunnel, type Tunnel } from './tunnel.js';
import { isUpstashApp } from './upstash-app.js';
import { reportUpstashApp } from './upstash-dev.js';
import {
  configuredUpstashKeys,
  resolveDevUpstashKeys,
  type ResolvedUpstashKeys,
  type UpstashKeyFlags,
} from './upstash-keys.js';

export interface DevOptions extends RunnerFlags, UpstashKeyFlags {
  port: number;
  host: string;
  db: string;
  token?: string;
  tui: boolean;
  appPort?: number;
  route?: string;
  app: boolean;
  /** Seconds to wait for the app's port. */
  appWait: number;
  tunnel?: boolean;
  tunnelHost?: string;
  subdomain?: string;
  remote?: string;
  /** `--retention`, in ms (0: keep finished runs forever). */
  retention: number;
  /** `--redact-header` names (WF_REDACT_HEADERS adds more). */
  redactHeader?: string[];
  /** Write an Upstash Workflow app's QSTASH_* variables into its env file. */
  writeUpstashEnv?: boolean;
}

function plainReporter(io: CliIO): DevReporter {
  return {
    info: (text) => io.out(`wf dev: ${text}`),
    warn: (text) => io.out(`wf dev: warning: ${text}`),
    error: (text) => io.out(`wf dev: error: ${text}`),
    app: (_stream, line) => io.out(`[app] ${line}`),
  };
}

function feedReporter(feed: LogFeed): DevReporter {
  return {
    info: (text) => feed.push({ source: 'wf', text }),
    warn: (text) => feed.push({ source: 'wf', text, level: 'warn' }),
    error: (text) => feed.push({ source: 'wf', text, level: 'error' }),
    app: (stream, text) => feed.push({ source: 'app', text, stream }),
  };
}

/** The runner `wf dev` uses: a new local one (SQLite), or a remote one checked for reach and token. */
async function openRunner(
  io: CliIO,
  options: DevOptions,
): Promise<{ url: string; token: ResolvedToken; upstashKeys?: ResolvedUpstashKeys; local?: LocalRunner }> {
  if (options.remote) {
    // Alerts are the runner's: a remote runner has its own (wf start --alert-webhook), this one starts none.
    if (options.alertWebhook !== undefined || options.publicUrl !== undefined) {
      throw new CliError(
        2,
        'BAD_FLAG',
        `--alert-webhook and --public-url configure the local runner; with --remote, set them on the remote runner (wf start --alert-webhook).`,
      );
    }
    const token = findClientToken(io.cwd, io.env, options.token);
    if (!token)
      throw new CliError(
        2,
        'NO_TOKEN',
        `--remote needs the runner's token: pass --token, or set WF_TOKEN (or WF_TOKEN in .env).`,
      );
    const url = options.remote.replace(/\/+$/, '');
    await checkRemoteRunner(url, token);
    // A remote runner's keys are its own: known here only when they were given to `wf dev` too.
    return {
      url,
      token: { token, source: options.token ? '--token' : 'WF_TOKEN or the env files' },
      upstashKeys: configuredUpstashKeys(io.env, options),
    };
  }
  // .wf/ holds the token and the database: keep it out of git from the first run.
  mkdirSync(join(io.cwd, '.wf'), { recursive: true });
  writeFileSync(join(io.cwd, '.wf', '.gitignore'), '*\n');
  const token = resolveDevToken(io.cwd, io.env, options.token);
  const upstashKeys = resolveDevUpstashKeys(io.cwd, io.env, options);
  const local = await startLocalRunner({
    dbPath: resolve(io.cwd, options.db),
    host: options.host,
    port: options.port,
    tokens: [token.token],
    tokenNames: [`the token from ${token.source}`],
    redactHeaders: redactHeaderNames(options.redactHeader, io.env),
    allowOrigins: options.allowOrigin,
    unreachableHorizonMs: options.unreachableHorizon,
    driveTimeoutMs: options.driveTimeout,
    retentionMs: options.retention,
    otel: otelFromFlags(options, io.env),
    alerts: alertOptions(options, io.env),
    upstashSigningKeys: upstashKeys.keys,
    upstashMaxRetries: options.upstashMaxRetries,
    upstashMaxMessageSize: options.upstashMaxMessageSize,
  });
  return { url: local.url, token, upstashKeys, local };
}

/**
 * `wf dev`, the one local command: the runner (local, or `--remote`), the app's dev command as a
 * child process with the runner's variables, a public tunnel to the app (`--tunnel`), a check that
 * the app's route answers, and the dashboard (or plain lines) until Ctrl-C, which stops all of it.
 */
export async function runDev(io: CliIO, argv: string[], options: DevOptions): Promise<void> {
  // Listen for Ctrl-C before anything is printed: a SIGINT that comes before the listener would
  // take Node's default action and kill `wf dev` without stopping the app or closing the runner.
  const interrupted = io.interrupted();
  // Also when whoever started wf dev is gone without a word (SIGKILLed, or its own parent killed):
  // a process manager's stop must not leave the runner's and the app's ports taken.
  const parent = io.watchParent?.();
  const app: AppSpec = resolveAppSpec(
    { argv, appPort: options.appPort, route: options.route, app: options.app },
    readAppDevConfig(io.cwd),
  );
  const wantsTunnel = Boolean(options.tunnel || options.tunnelHost || options.subdomain);
  if (wantsTunnel && app.port === undefined) {
    throw new CliError(
      2,
      'NO_APP_PORT',
      `--tunnel needs the app's port: pass --app-port (\`wf init\` records it in package.json as "wfkit": { "port" }).`,
    );
  }
  const tui = options.tui && io.isTTY === true;
  const feed = createLogFeed(app.label ?? (app.port !== undefined ? `the app on port ${app.port}` : 'wf dev'));
  const report = tui ? feedReporter(feed) : plainReporter(io);

  const runner = await openRunner(io, options);
  const { token, source } = runner.token;
  let tunnel: Tunnel | undefined;
  if (wantsTunnel) {
    try {
      tunnel = await openTunnel({
        port: app.port!,
        host: options.tunnelHost ?? DEFAULT_TUNNEL_HOST,
        subdomain: options.subdomain,
        onStatus: (status) => reportTunnel(report, status),
      });
    } catch (error) {
      await runner.local?.close();
      throw error;
    }
  }

  const where = runner.local
    ? `runner listening on ${runner.url} (SQLite ${options.db})`
    : `using the runner at ${runner.url} (remote)`;
  if (!tui) report.info(where);
  report.info(`token from ${source}; apps need WF_TOKEN=${token} and WF_RUNNER_URL=${runner.url}`);
  if (tunnel) {
    // The app's public URL is the tunnel's: the local runner may call it.
    runner.local?.runner.allowOrigin(new URL(tunnel.url).origin);
    report.info(`tunnel open: ${tunnel.url} → localhost:${app.port} (the app gets it as WF_WORKFLOW_URL)`);
    if (app.route) report.info(`POST ${tunnel.url.replace(/\/+$/, '')}${app.route} starts a run`);
  }

  let stopFollowing = (): void => {};
  let dashboard: { exited: Promise<void>; stop(): void } | undefined;
  if (tui) {
    // Loaded only here, so the plain commands never load React and Ink.
    const { startDashboard } = await import('../../tui/index.js');
    const managesApp = app.command !== undefined || app.port !== undefined || tunnel !== undefined;
    // An Upstash app reads QSTASH_* (listed in the log pane): say so where a wfkit app's variables are named.
    const upstashApp = isUpstashApp(readAppPackage(io.cwd));
    const subtitle = managesApp
      ? `${app.label ? `app: ${app.label}` : `app on port ${app.port}`}${tunnel ? ` · public ${tunnel.url}` : ''} · ${upstashApp ? `Upstash app: QSTASH_URL=${runner.url}` : `WF_TOKEN from ${source}`}`
      : upstashApp
        ? `Upstash apps need QSTASH_URL=${runner.url} and QSTASH_TOKEN=${qstashToken(token)} ` +
          `(the keys are in the log pane) · SQLite ${options.db}`
        : `apps need WF_TOKEN=${token} (from ${source}) and WF_RUNNER_URL=${runner.url} · SQLite ${options.db}`;
    dashboard = startDashboard({
      runnerUrl: runner.url,
      token,
      title: 'wf dev',
      subtitle,
      env: io.env,
      log: managesApp || upstashApp ? feed : undefined,
    });
  } else if (runner.local) {
    stopFollowing = runner.local.runner.events.subscribe((event) => io.out(eventLine(eventDto(event))));
  } else {
    let live = true;
    stopFollowing = httpDataSource({ url: runner.url, token, bodies: true }).subscribe({
      event: (event) => io.out(eventLine(event)),
      open: () => {
        if (!live) report.info(`following the runner at ${runner.url} again`);
        live = true;
      },
      closed: (error) => {
        if (live) report.warn(`lost the runner's event stream (${error.message}); reconnecting`);
        live = false;
      },
    });
  }
  // After the runner's events are followed, so nothing the app starts goes unseen.
  const pkg = readAppPackage(io.cwd);
  const wrangler =
    'wrangler' in { ...pkg?.dependencies, ...pkg?.devDependencies } || /\bwrangler\b/.test(app.label ?? '');
  const upstash = reportUpstashApp({
    io,
    pkg,
    report,
    runnerUrl: runner.url,
    token,
    keys: runner.upstashKeys,
    tunnel,
    appPort: app.port,
    write: options.writeUpstashEnv === true,
    startsApp: app.command !== undefined,
  });
  const session = startAppSession({
    app,
    cwd: io.cwd,
    env: io.env,
    token,
    runnerUrl: runner.url,
    remote: !runner.local,
    tunnel,
    wrangler,
    report,
    portTimeoutMs: options.appWait * 1000,
    ...(upstash && { extraEnv: upstash.processEnv, upstash: true }),
  });
  if (!tui) report.info('waiting for runs (Ctrl-C stops)');

  const orphaned = parent?.gone.then((reason) => report.info(`stopping: ${reason}`));
  await Promise.race([dashboard?.exited ?? new Promise<never>(() => {}), interrupted, ...(orphaned ? [orphaned] : [])]);
  parent?.stop();
  if (dashboard) {
    dashboard.stop();
    await dashboard.exited;
  }
  io.out('wf dev: stopping…');
  stopFollowing();
  tunnel?.close();
  await session.stop();
  await runner.local?.close();
}
