import { render } from 'ink';
import { createElement } from 'react';
import { App } from './App.js';
import { httpDataSource, type DataSource } from './data-source.js';
import { colorEnabled } from './format.js';
import type { LogFeed } from './log-feed.js';

export { App, type AppProps } from './App.js';
export { httpDataSource, type DataSource } from './data-source.js';
export { createLogFeed, type LogEntry, type LogFeed } from './log-feed.js';

export interface DashboardOptions {
  /** The runner API, e.g. `http://127.0.0.1:7766` (ignored when `source` is given). */
  runnerUrl: string;
  /** Bearer token: reads are open on loopback, but cancel and rerun need it. */
  token?: string;
  /** Read from somewhere else than the runner's HTTP API (tests, a future remote transport). */
  source?: DataSource;
  title?: string;
  subtitle?: string;
  /** @default process.stdout / process.stdin */
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
  /** @default process.env (NO_COLOR turns colour off) */
  env?: Record<string, string | undefined>;
  /** The app's output for the log pane (`wf dev` running the app); no pane without it. */
  log?: LogFeed;
}

export interface Dashboard {
  /** Settles when the user quits (`q`, Ctrl-C) or `stop()` is called. */
  exited: Promise<void>;
  stop(): void;
}

/**
 * Renders the terminal dashboard full screen (the alternate screen: the shell's scrollback is
 * left as it was) until the user quits. The caller decides that stdout is a terminal.
 */
export function startDashboard(options: DashboardOptions): Dashboard {
  const source = options.source ?? httpDataSource({ url: options.runnerUrl, token: options.token });
  const color = colorEnabled(options.env ?? process.env);
  const instance = render(
    createElement(App, { source, title: options.title, subtitle: options.subtitle, color, log: options.log }),
    {
      stdout: options.stdout ?? process.stdout,
      stdin: options.stdin ?? process.stdin,
      // The caller already chose the dashboard for a terminal; CI variables must not turn it into a log.
      interactive: true,
      alternateScreen: true,
      exitOnCtrlC: true,
    },
  );
  return {
    exited: instance.waitUntilExit().then(
      () => undefined,
      () => undefined,
    ),
    stop: () => instance.unmount(),
  };
}
