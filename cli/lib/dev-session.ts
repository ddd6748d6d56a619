import type { AppSpec } from './app-config.js';
import { describeExit, startAppProcess, type AppProcess, type AppStream } from './app-process.js';
import { explainProbe, explainTunnelProbe, probeApp, urlWarning, waitForPort } from './probe.js';
import type { Tunnel, TunnelStatus } from './tunnel.js';

/** Where `wf dev` says things: plain lines (`wf dev: …`, `[app] …`) or the dashboard's log pane. */
export interface DevReporter {
  info(text: string): void;
  warn(text: string): void;
  error(text: string): void;
  app(stream: AppStream, line: string): void;
}

export interface AppSessionOptions {
  app: AppSpec;
  cwd: string;
  /** The environment the app starts from (`wf dev`'s own). */
  env: NodeJS.ProcessEnv;
  token: string;
  runnerUrl: string;
  remote: boolean;
  tunnel?: Tunnel;
  /** The app runs on `wrangler dev`, which must be told to pass the process env to the Worker. */
  wrangler?: boolean;
  /** More variables for the app (an Upstash Workflow app's QSTASH_URL and friends). */
  extraEnv?: Record<string, string>;
  /** An Upstash Workflow app: its route checks `Upstash-Signature`, so the wfkit probe would only mislead. */
  upstash?: boolean;
  report: DevReporter;
  /** How long to wait for the app's port. @default 60000 */
  portTimeoutMs?: number;
  /** SIGINT → SIGTERM → SIGKILL spacing when stopping the app. @default 5000 */
  graceMs?: number;
}

export interface AppSession {
  /** Settles when the start-up check of the app is over (whatever it found). */
  checked: Promise<void>;
  stop(): Promise<void>;
}

/** The variables the app gets: the runner's token and URL, the tunnel's URL, its port, and ENVIRONMENT=development unless it has one. */
export function appEnv(
  options: Pick<AppSessionOptions, 'env' | 'token' | 'runnerUrl' | 'tunnel' | 'app' | 'wrangler' | 'extraEnv'>,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...options.env,
    ...options.extraEnv,
    WF_TOKEN: options.token,
    WF_RUNNER_URL: options.runnerUrl,
  };
  if (options.tunnel) env.WF_WORKFLOW_URL = options.tunnel.url;
  // Development: the route may take its URL from a localhost Host (never in production; see serve/core/url.ts).
  if (env.ENVIRONMENT === undefined) env.ENVIRONMENT = 'development';
  // wrangler dev gives a Worker only .dev.vars/.env unless told to include the process env too.
  if (options.wrangler) env.CLOUDFLARE_INCLUDE_PROCESS_ENV = 'true';
  if (options.app.port !== undefined && env.PORT === undefined) env.PORT = String(options.app.port);
  return env;
}

/** Tunnel events as lines. */
export function reportTunnel(report: DevReporter, status: TunnelStatus): void {
  switch (status.type) {
    case 'down':
      report.warn(`the tunnel dropped (${status.reason}); reconnecting`);
      break;
    case 'reconnecting': {
      const delay = (status.delayMs / 1000).toFixed(1);
      report.info(`tunnel: reconnecting, attempt ${status.attempt} of ${status.of} in ${delay} s`);
      break;
    }
    case 'reconnected':
      if (status.url === status.previous) report.info(`tunnel reconnected: ${status.url}`);
      else {
        report.warn(
          `tunnel reconnected at a new URL ${status.url} (was ${status.previous}): ` +
            'restart wf dev so the app and new runs use it',
        );
      }
      break;
    case 'failed':
      report.error(`the tunnel is down: gave up after ${status.attempts} attempts (${status.reason}); restart wf dev`);
      break;
  }
}

/**
 * The app side of `wf dev`: starts the app's dev command (when there is one) with the runner's
 * variables, relays its output, says when it exits (the runner stays up), and checks the route
 * once its port answers: a signed probe on the port, then through the tunnel when there is one.
 */
export function startAppSession(options: AppSessionOptions): AppSession {
  const { app, report, tunnel } = options;
  const stopping = new AbortController();
  let child: AppProcess | undefined;
  if (app.command) {
    const extra =
      (tunnel ? ', WF_WORKFLOW_URL' : '') + (options.extraEnv ? `, ${Object.keys(options.extraEnv).join(', ')}` : '');
    report.info(`starting the app: ${app.label} (with WF_TOKEN, WF_RUNNER_URL${extra})`);
    child = startAppProcess({
      command: app.command,
      cwd: options.cwd,
      env: appEnv(options),
      onLine: report.app,
      graceMs: options.graceMs,
    });
    void child.exited.then((exit) => {
      if (stopping.signal.aborted) return;
      report.warn(`the app (${app.label}) ${describeExit(exit)}; the runner keeps running (Ctrl-C stops wf dev)`);
    });
  }
  const checked = check(options, child, stopping.signal).catch((error: unknown) =>
    report.error(`checking the app failed: ${(error as Error).message}`),
  );
  return {
    checked,
    async stop() {
      stopping.abort();
      await child?.stop();
      await checked;
    },
  };
}

async function check(options: AppSessionOptions, child: AppProcess | undefined, stopping: AbortSignal): Promise<void> {
  const { app, report, tunnel, token } = options;
  if (app.port === undefined) {
    if (app.command)
      report.info('not checking the app: its port is unknown (--app-port, or "wfkit": { "port" } in package.json)');
    return;
  }
  const port = app.port;
  // Stop waiting when the app exits or wf dev stops.
  const gone = new AbortController();
  stopping.addEventListener('abort', () => gone.abort(), { once: true });
  void child?.exited.then(() => gone.abort());
  report.info(`waiting for the app on port ${port}…`);
  const host = await waitForPort(port, {
    timeoutMs: options.portTimeoutMs,
    signal: gone.signal,
    onProgress: (seconds) => report.info(`still waiting for the app on port ${port} (${seconds} s)…`),
  });
  if (stopping.aborted) return;
  if (!host) {
    if (gone.signal.aborted) return; // the exit was reported already
    report.error(`nothing listens on port ${port} (is the app's dev server on another port? --app-port)`);
    return;
  }
  if (options.upstash) {
    report.info(
      `the app listens on port ${port}; an Upstash Workflow app: start a run with a POST to its route or Client.trigger`,
    );
    return;
  }
  if (app.route === undefined) {
    report.info(`the app listens on port ${port}; pass --route (or "wfkit": { "route" }) to check its workflow route`);
    return;
  }
  const route = app.route;
  const local = `http://${host === '::1' ? '[::1]' : host}:${port}${route}`;
  const aliases = [
    `http://localhost:${port}${route}`,
    `http://127.0.0.1:${port}${route}`,
    `http://[::1]:${port}${route}`,
  ];
  const publicUrl = tunnel ? tunnel.url.replace(/\/+$/, '') + route : undefined;
  const signUrls = publicUrl ? [...aliases, publicUrl] : aliases;
  const result = await probeApp(local, signUrls, token);
  if (stopping.aborted) return;
  const finding = explainProbe(result, { port, route });
  report[finding.level](finding.text);
  if (result.kind !== 'ok') return;
  const warning = urlWarning(result.url, { port, route, tunnelUrl: tunnel?.url, remote: options.remote });
  if (warning) report.warn(warning);
  if (publicUrl) {
    const through = explainTunnelProbe(await probeApp(publicUrl, signUrls, token), publicUrl);
    if (!stopping.aborted) report[through.level](through.text);
  }
}
