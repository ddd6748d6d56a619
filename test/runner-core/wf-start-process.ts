import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** `wf start` as a child process of the built CLI: what an operator runs, killed the way machines die. */

export const CLI = resolve(import.meta.dirname, '../../dist/cli/index.js');

export function assertBuiltCli(): void {
  if (!existsSync(CLI)) {
    throw new Error(
      `${CLI} is missing: run \`npm run build\` first (this test runs the built \`wf start\` as a child process).`,
    );
  }
}

export interface WfStartProcess {
  child: ChildProcess;
  /** The API's base URL, from the "listening" log line. */
  url: string;
  /** The runner's id (its lease owner in the store), from the same line. */
  owner: string;
  stdout: () => string;
  stderr: () => string;
  /** Every stdout and stderr line that parses as JSON (all of them with `--log-format json`). */
  jsonLines: () => Record<string, unknown>[];
  /** Lines that do not parse as JSON (none expected with `--log-format json`). */
  otherLines: () => string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  running: () => boolean;
}

function parseLines(text: string): { json: Record<string, unknown>[]; other: string[] } {
  const json: Record<string, unknown>[] = [];
  const other: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      json.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      other.push(line);
    }
  }
  return { json, other };
}

/** Starts `wf start …args` and resolves once it listens (rejects if it exits first). */
export function spawnWfStart(
  args: readonly string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<WfStartProcess> {
  const child = spawn(process.execPath, [CLI, 'start', '--port', '0', ...args], {
    cwd,
    env: {
      ...process.env,
      WF_TOKEN: '',
      WF_TOKENS: '',
      SERVICE_TOKEN: '',
      WF_DATABASE_URL: '',
      WF_LEASE_MS: '',
      WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const both = (): string => `${stdout}\n${stderr}`;
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`wf start did not listen within 20 s.\nstdout: ${stdout}\nstderr: ${stderr}`)),
      20_000,
    );
    const onData = (): void => {
      const match = /listening on (http:\/\/[^\s"]+)/.exec(stdout);
      if (!match) return;
      const owner = /"runner":"([^"]+)"|runner=([^,)\s]+)/.exec(stdout);
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      resolveStart({
        child,
        url: match[1]!,
        owner: owner?.[1] ?? owner?.[2] ?? '',
        stdout: () => stdout,
        stderr: () => stderr,
        jsonLines: () => parseLines(both()).json,
        otherLines: () => parseLines(both()).other,
        exited,
        running: () => child.exitCode === null && child.signalCode === null,
      });
    };
    child.stdout!.on('data', onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`wf start exited (${code ?? signal}) before listening.\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/** Runs `wf start …args` expecting it to exit by itself (a refusal); its code and output. */
export async function runWfStartToExit(
  args: readonly string[],
  env: Record<string, string>,
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'start', ...args], {
    cwd,
    env: {
      ...process.env,
      WF_TOKEN: '',
      WF_TOKENS: '',
      SERVICE_TOKEN: '',
      WF_DATABASE_URL: '',
      WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('close', (c) => done(c)));
  return { code, stdout, stderr };
}
