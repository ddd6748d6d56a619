import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `wf` as a child process, for the CLI's end-to-end tests: spawn, read its output as it comes, stop it. */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = join(ROOT, 'dist', 'cli', 'index.js');
/** The tiny app `wf dev -- node …` runs in these tests (the built node adapter, knobs in its header). */
export const TINY_APP = join(ROOT, 'test', 'cli', 'fixtures', 'tiny-app.mjs');

/** The parent's env without anything that would point the CLI or the app at another runner or token. */
export function baseEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
  for (const name of ['WF_TOKEN', 'SERVICE_TOKEN', 'WF_RUNNER_URL', 'WF_WORKFLOW_URL', 'SERVICE_WORKFLOW_URL', 'PORT'])
    delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith('APP_')) delete env[name];
  return { ...env, ...extra };
}

export function assertBuilt(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the CLI's end-to-end tests.`);
}

export interface Cli {
  proc: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();
/** Process groups of the apps `wf dev` started (the tiny app prints `app pid N`): killed at the end whatever happened. */
const appGroups = new Set<number>();

export function spawnCli(args: string[], cwd: string, env: NodeJS.ProcessEnv): Cli {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(proc);
  const cli: Cli = {
    proc,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => proc.once('close', (code) => (running.delete(proc), resolve(code)))),
  };
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    cli.stdout += chunk;
    for (const match of chunk.matchAll(/app pid (\d+)/g)) appGroups.add(Number(match[1]));
  });
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => (cli.stderr += chunk));
  return cli;
}

/**
 * Resolves with the first match of `pattern` in stdout (searched from `from`); rejects with the
 * output if the process exits first or `timeoutMs` passes.
 */
export function untilOutput(cli: Cli, pattern: RegExp, timeoutMs = 20_000, from = 0): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      cli.proc.stdout!.off('data', check);
    };
    const check = (): boolean => {
      const match = pattern.exec(cli.stdout.slice(from));
      if (match) {
        done();
        resolve(match);
      }
      return match !== null;
    };
    const timer = setTimeout(() => {
      done();
      reject(
        new Error(
          `\`wf\` did not print ${pattern} within ${timeoutMs} ms.\nstdout: ${cli.stdout}\nstderr: ${cli.stderr}`,
        ),
      );
    }, timeoutMs);
    if (check()) return;
    cli.proc.stdout!.on('data', check);
    void cli.exited.then((code) => {
      if (!check()) {
        done();
        reject(
          new Error(
            `\`wf\` exited (${code}) before printing ${pattern}.\nstdout: ${cli.stdout}\nstderr: ${cli.stderr}`,
          ),
        );
      }
    });
  });
}

/** SIGINT, as Ctrl-C would; resolves with the exit code. */
export async function interrupt(cli: Cli): Promise<number | null> {
  if (cli.proc.exitCode === null && cli.proc.signalCode === null) cli.proc.kill('SIGINT');
  return cli.exited;
}

/** SIGKILLs every `wf` still running and every app group they started (afterAll), then waits for each `wf` to close. */
export async function killAllCli(): Promise<void> {
  await Promise.all(
    [...running].map(async (proc) => {
      const closed = new Promise((resolve) => proc.once('close', resolve));
      proc.kill('SIGKILL');
      await closed;
    }),
  );
  for (const pid of appGroups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }
  appGroups.clear();
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const dirs: string[] = [];
export function tempDir(prefix = 'wf-dev-app-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The runner URL `wf dev` printed. */
export async function runnerUrlOf(cli: Cli): Promise<string> {
  return (await untilOutput(cli, /(?:runner listening on|using the runner at) (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
}
