import { spawn, type ChildProcess } from 'node:child_process';
import type { AppSpec } from './app-config.js';

export type AppStream = 'stdout' | 'stderr';

export interface AppExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the command could not start at all (not found, not executable). */
  error?: Error;
}

export interface AppProcessOptions {
  command: NonNullable<AppSpec['command']>;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** One call per complete line of output (a last partial line is flushed at exit). */
  onLine: (stream: AppStream, line: string) => void;
  /** SIGINT, then this long before SIGTERM, and as long again before SIGKILL. @default 5000 */
  graceMs?: number;
}

export interface AppProcess {
  readonly pid: number | undefined;
  /** Settles when the command's own process has exited (or failed to start). */
  readonly exited: Promise<AppExit>;
  /** Stops the whole process group (the command and everything it started); resolves when it is gone. */
  stop(): Promise<void>;
}

/** Lines longer than this are cut: a minified bundle printed by a dev server must not flood the log. */
const MAX_LINE = 4000;

function splitLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): () => void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const lines = (rest + chunk).split(/\r?\n/);
    rest = lines.pop() ?? '';
    if (rest.length > MAX_LINE) {
      onLine(rest.slice(0, MAX_LINE) + '…');
      rest = '';
    }
    for (const line of lines) onLine(line.length > MAX_LINE ? line.slice(0, MAX_LINE) + '…' : line);
  });
  return () => {
    if (rest !== '') onLine(rest);
    rest = '';
  };
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    // ESRCH: gone. EPERM: what is left is not ours to signal (it changed user), so waiting cannot help.
    return false;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {}
}

/** Resolves true once the group is gone, false if it is still there after `ms`. */
async function groupGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (groupAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/**
 * What stops the app when `wf dev` cannot: a kill -9 of `wf dev` runs none of its code, but the
 * kernel closes its end of this little process's stdin, and the watchdog then stops the app's
 * group (SIGTERM, SIGKILL after 5 s) and exits. Its own process group, so a Ctrl-C meant for
 * `wf dev` does not stop it first; it holds nothing of `wf dev` open (unref'd both ways).
 */
function startWatchdog(group: number): ChildProcess {
  const script =
    `const g=${group};const kill=(s)=>{try{process.kill(-g,s);return true}catch{return false}};` +
    `process.stdin.on('data',()=>{});process.stdin.on('end',()=>{if(!kill('SIGTERM'))process.exit(0);const until=Date.now()+5000;` +
    `setInterval(()=>{if(!kill(0))process.exit(0);if(Date.now()>until){kill('SIGKILL');process.exit(0)}},100)});`;
  const watchdog = spawn(process.execPath, ['-e', script], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  watchdog.on('error', () => {});
  watchdog.stdin!.on('error', () => {});
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
  return watchdog;
}

/**
 * Starts the app's dev command in its own process group, so a Ctrl-C at the terminal reaches
 * `wf dev` alone and `wf dev` decides how the app stops: SIGINT to the group (dev servers clean up
 * on it), then SIGTERM, then SIGKILL, each after `graceMs`. An argv runs without a shell; a
 * package.json command goes through `/bin/sh -c`, like `npm run` would.
 *
 * @example startAppProcess({ command: { argv: ['npm', 'run', 'dev'] }, cwd, env, onLine: (s, l) => console.log(l) })
 */
export function startAppProcess(options: AppProcessOptions): AppProcess {
  const { command, cwd, env, onLine } = options;
  const graceMs = options.graceMs ?? 5000;
  const stdio: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];
  let child: ChildProcess;
  if ('argv' in command) {
    const [file, ...args] = command.argv as [string, ...string[]];
    child = spawn(file, args, { cwd, env, stdio, detached: true });
  } else {
    child = spawn(command.shell, { cwd, env, stdio, detached: true, shell: true });
  }
  const flushOut = splitLines(child.stdout!, (line) => onLine('stdout', line));
  const flushErr = splitLines(child.stderr!, (line) => onLine('stderr', line));
  const exited = new Promise<AppExit>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    // 'close': the pipes are drained too, so the last lines come before the exit is reported.
    child.once('close', (code, signal) => {
      flushOut();
      flushErr();
      resolve({ code, signal });
    });
  });
  const pid = child.pid;
  // When `wf dev` is killed outright (kill -9), none of the below runs: the watchdog stops the app.
  const watchdog = pid === undefined ? undefined : startWatchdog(pid);
  // Last resort when `wf dev` itself ends without stopping the app (a crash, process.exit).
  const onExit = (): void => {
    if (pid !== undefined) signalGroup(pid, 'SIGKILL');
  };
  process.once('exit', onExit);
  let stopping: Promise<void> | undefined;
  return {
    pid,
    exited,
    stop() {
      stopping ??= (async () => {
        if (pid === undefined) return;
        for (const signal of ['SIGINT', 'SIGTERM', 'SIGKILL'] as const) {
          if (!groupAlive(pid)) break;
          signalGroup(pid, signal);
          if (await groupGone(pid, signal === 'SIGKILL' ? 5000 : graceMs)) break;
        }
        await exited;
        watchdog?.kill();
        process.off('exit', onExit);
      })();
      return stopping;
    },
  };
}

/** `exited with code 1`, `stopped by SIGTERM`, or why it did not start. */
export function describeExit(exit: AppExit): string {
  if (exit.error) return `could not start: ${exit.error.message}`;
  if (exit.signal) return `was stopped by ${exit.signal}`;
  return `exited with code ${exit.code}`;
}
