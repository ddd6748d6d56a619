import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** `app-process.mjs` as a child process: a real app that tests can kill -9, stop and restart. */

const SCRIPT = resolve(import.meta.dirname, 'app-process.mjs');
const BUILT_ADAPTER = resolve(import.meta.dirname, '../../dist/serve/adapters/node.js');

export interface AppProcessOptions {
  /** @default 'node' */
  framework?: 'node' | 'hono';
  token: string;
  runnerUrl: string;
  /** @default 0 (any free port); a restart passes the port the last one had. */
  port?: number;
  /** The route's public URL (the `url` option), e.g. a fault proxy in front of it. */
  publicUrl?: string;
  /** NDJSON file of step executions (see app-process.mjs). */
  logFile?: string;
  /** The route's `timeBudgetMs`: a small one makes several drives per run. */
  timeBudgetMs?: number;
}

export interface AppProcess {
  child: ChildProcess;
  pid: number;
  port: number;
  /** The route's own URL, `http://127.0.0.1:<port>/workflow`. */
  url: string;
  output: () => string;
  running: () => boolean;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when the `n`-th line matching `pattern` has been printed (from the start). */
  printed(pattern: RegExp, n?: number, timeoutMs?: number): Promise<void>;
  /** SIGKILL (SIGCONT first, in case it is stopped), then waits for the exit. */
  kill(): Promise<void>;
}

export function assertBuiltAdapter(): void {
  if (!existsSync(BUILT_ADAPTER))
    throw new Error(
      `${BUILT_ADAPTER} is missing: run \`npm run build\` first (the app process imports the built adapters).`,
    );
}

/** Starts the app and resolves once it listens (rejects with its output if it exits or takes 20 s). */
export async function spawnApp(options: AppProcessOptions): Promise<AppProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WF_TOKEN: options.token,
    WF_RUNNER_URL: options.runnerUrl,
    APP_FRAMEWORK: options.framework ?? 'node',
    PORT: String(options.port ?? 0),
    APP_PUBLIC_URL: options.publicUrl ?? '',
    APP_LOG: options.logFile ?? '',
    APP_TIME_BUDGET_MS: options.timeBudgetMs === undefined ? '' : String(options.timeBudgetMs),
    WF_WORKFLOW_URL: '',
    SERVICE_WORKFLOW_URL: '',
    SERVICE_TOKEN: '',
  };
  const child = spawn(process.execPath, [SCRIPT], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const running = (): boolean => child.exitCode === null && child.signalCode === null;

  const printed = (pattern: RegExp, n = 1, timeoutMs = 20_000): Promise<void> =>
    new Promise((done, fail) => {
      const global = new RegExp(pattern.source, pattern.flags.includes('g') ? pattern.flags : `${pattern.flags}g`);
      const check = (): boolean => (output.match(global)?.length ?? 0) >= n;
      if (check()) return done();
      if (!running())
        return fail(new Error(`The app has exited; it did not print ${pattern} (${n}×); its output:\n${output}`));
      const timer = setTimeout(
        () =>
          finish(new Error(`The app did not print ${pattern} (${n}×) within ${timeoutMs} ms; its output:\n${output}`)),
        timeoutMs,
      );
      const onData = (): void => void (check() && finish());
      const onExit = (): void => finish(new Error(`The app exited before printing ${pattern}; its output:\n${output}`));
      function finish(error?: Error): void {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.off('exit', onExit);
        if (error) fail(error);
        else done();
      }
      child.stdout!.on('data', onData);
      child.once('exit', onExit);
    });

  await printed(/app listening on /);
  const match = /app listening on (http:\/\/127\.0\.0\.1:(\d+)\/\S*)/.exec(output)!;
  return {
    child,
    pid: child.pid!,
    port: Number(match[2]),
    url: match[1]!,
    output: () => output,
    running,
    exited,
    printed,
    async kill() {
      if (running()) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
      }
      await exited;
    },
  };
}

/** One line of the execution log. */
export interface ExecutionLine {
  e: 'start' | 'end';
  runId: string;
  index: number;
  exec: string;
  /** The app's `Date.now()` (same host clock as the runner's). */
  at: number;
  output?: string;
  pid: number;
}

/** Every line of an app execution log (a last line cut by a kill is skipped). */
export function readExecutions(file: string): ExecutionLine[] {
  if (!existsSync(file)) return [];
  const lines: ExecutionLine[] = [];
  for (const text of readFileSync(file, 'utf8').split('\n')) {
    if (text.trim() === '') continue;
    try {
      lines.push(JSON.parse(text) as ExecutionLine);
    } catch {}
  }
  return lines;
}
