import { spawn, type ChildProcess } from 'node:child_process';
import { dirname } from 'node:path';

/**
 * Child processes of the framework proofs (host-suite.ts, and the Upstash hosts): each in its own
 * process group, output kept for failure messages, stopped as a whole group.
 */

const NODE_BIN = dirname(process.execPath);
/** Installs, dev servers and type checks print a lot; failures show the tail. */
const OUTPUT_TAIL = 12_000;

/** The environment of every child: Node 24 first on PATH, no telemetry, no test or npm-script leftovers. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // npm_config_cache stays: the installs share the caller's npm cache.
    if (key === 'npm_config_cache' || !/^(npm_|VITEST|VITE_|WF_|SERVICE_)|^(NODE_ENV|TEST|NODE_OPTIONS)$/.test(key))
      env[key] = value;
  }
  return {
    ...env,
    PATH: `${NODE_BIN}:${process.env.PATH ?? ''}`,
    CI: 'true',
    DO_NOT_TRACK: '1',
    NEXT_TELEMETRY_DISABLED: '1',
    NUXT_TELEMETRY_DISABLED: '1',
    WRANGLER_SEND_METRICS: 'false',
    // wrangler otherwise fetches a sample `Request.cf` object from the internet at start.
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    FORCE_COLOR: '0',
  };
}

export interface Child {
  process: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts a command in its own process group (so everything it spawns can be stopped together); `env` adds to the clean environment. */
export function start(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Child {
  let output = '';
  const child = spawn(command, args, {
    cwd,
    env: { ...childEnv(), ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-OUTPUT_TAIL);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  child.on('error', (error) => collect(Buffer.from(`\n[spawn error] ${error.message}\n`)));
  return { process: child, output: () => output, exited };
}

/** Runs a command to its end; fails with its own output when it exits non-zero or takes too long. */
export async function run(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs = 300_000,
  env: NodeJS.ProcessEnv = {},
): Promise<string> {
  const child = start(command, args, cwd, env);
  const timer = setTimeout(() => void stop(child), timeoutMs);
  const code = await child.exited.finally(() => clearTimeout(timer));
  if (code !== 0) throw new Error(`\`${command} ${args.join(' ')}\` in ${cwd} exited with ${code}:\n${child.output()}`);
  return child.output();
}

const groupAlive = (pid: number): boolean => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** SIGTERM to the whole group, then SIGKILL if anything is left after 10 s; resolves when the group is gone. */
export async function stop(child: Child): Promise<void> {
  const pid = child.process.pid;
  if (pid === undefined) return;
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-pid, name);
    } catch {}
  };
  signal('SIGTERM');
  const deadline = Date.now() + 10_000;
  while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (groupAlive(pid)) signal('SIGKILL');
  while (groupAlive(pid)) await new Promise((r) => setTimeout(r, 50));
}

const running = new Set<Child>();
// Last resort if the worker dies before afterAll: no server outlives the test process.
process.once('exit', () => {
  for (const child of running)
    if (child.process.pid)
      try {
        process.kill(-child.process.pid, 'SIGKILL');
      } catch {}
});

/** `start`, and remembered until `stopServer`, so that an early exit of the test process kills it too. */
export function startServer(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Child {
  const child = start(command, args, cwd, env);
  running.add(child);
  return child;
}

export async function stopServer(child: Child | undefined): Promise<void> {
  if (!child) return;
  await stop(child);
  running.delete(child);
}

/**
 * Polls until the server answers without a server error (some dev servers answer 500 while they
 * are still starting); fails at once, with its output, if it exits.
 */
export async function waitUntilServing(child: Child, url: string, timeoutMs: number): Promise<void> {
  let exited = false;
  void child.exited.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (exited) throw new Error(`The server exited before it served ${url}:\n${child.output()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      await response.body?.cancel();
      if (response.status < 500) return;
      last = `answered ${response.status}`;
    } catch (error) {
      last = (error as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`The server did not serve ${url} within ${timeoutMs / 1000} s (last: ${last}):\n${child.output()}`);
}
