import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { serve } from '../../serve/adapters/node.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(ROOT, 'dist', 'cli', 'index.js');
const TOKEN = 'T';
const RUN_ID = /^wfr_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The parent's env without anything that would point the CLI at another runner or token. */
const BASE_ENV: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
for (const name of ['WF_TOKEN', 'SERVICE_TOKEN', 'WF_RUNNER_URL', 'WF_WORKFLOW_URL', 'SERVICE_WORKFLOW_URL'])
  delete BASE_ENV[name];

interface Cli {
  proc: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
}

const longLived = new Set<ChildProcess>();
const shortLived = new Set<ChildProcess>();

function spawnCli(args: string[], cwd: string, env: NodeJS.ProcessEnv, keep = false): Cli {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  (keep ? longLived : shortLived).add(proc);
  const cli: Cli = {
    proc,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => proc.once('close', (code) => resolve(code))),
  };
  proc.stdout!.setEncoding('utf8').on('data', (chunk: string) => (cli.stdout += chunk));
  proc.stderr!.setEncoding('utf8').on('data', (chunk: string) => (cli.stderr += chunk));
  return cli;
}

/** Resolves with the first match of `pattern` in the child's stdout; rejects, with its output, if it exits first. */
function untilOutput(cli: Cli, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = (): boolean => {
      const match = pattern.exec(cli.stdout);
      if (match) {
        cli.proc.stdout!.off('data', check);
        resolve(match);
      }
      return match !== null;
    };
    if (check()) return;
    cli.proc.stdout!.on('data', check);
    void cli.exited.then((code) => {
      if (!check())
        reject(
          new Error(
            `\`wf\` exited (${code}) before printing ${pattern}.\nstdout: ${cli.stdout}\nstderr: ${cli.stderr}`,
          ),
        );
    });
  });
}

async function killAll(procs: Set<ChildProcess>): Promise<void> {
  await Promise.all(
    [...procs].map(async (proc) => {
      if (proc.exitCode === null && proc.signalCode === null) {
        const closed = new Promise((resolve) => proc.once('close', resolve));
        proc.kill('SIGKILL');
        await closed;
      }
    }),
  );
  procs.clear();
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  return { promise: new Promise<void>((r) => (resolve = r)), resolve };
}

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wf-dev-e2e-'));
  dirs.push(dir);
  return dir;
}

let devDir: string;
let dev: Cli;
let runnerUrl: string;
let app: Server;
let appUrl: string;
let gate = deferred();

/** Runs `wf …` to its end, as a client in the dev folder (WF_TOKEN and WF_RUNNER_URL set). */
async function wf(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = spawnCli(args, devDir, { ...BASE_ENV, WF_TOKEN: TOKEN, WF_RUNNER_URL: runnerUrl });
  const code = await cli.exited;
  return { code, stdout: cli.stdout, stderr: cli.stderr };
}

async function runStatus(id: string): Promise<{ status: string; stepsDone: number }> {
  const response = await fetch(`${runnerUrl}/v1/runs/${id}`);
  return ((await response.json()) as { run: { status: string; stepsDone: number } }).run;
}

async function trigger(route: string): Promise<string> {
  const { code, stdout, stderr } = await wf('trigger', appUrl + route, '--data', '{"text":"hello"}');
  expect(stderr).toBe('');
  expect(code, stderr).toBe(0);
  const id = stdout.trim();
  expect(id).toMatch(RUN_ID);
  return id;
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the CLI's end-to-end tests.`);
  devDir = tempDir();
  dev = spawnCli(['dev', '--no-tui', '--port', '0', '--token', TOKEN], devDir, BASE_ENV, true);
  runnerUrl = (await untilOutput(dev, /runner listening on (http:\/\/127\.0\.0\.1:\d+)/))[1]!;

  const routes: Record<string, ReturnType<typeof serve>> = {};
  app = createServer((req, res) => {
    const route = routes[req.url ?? ''];
    if (route) void route(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  // Told its public URL, as a deployed app is (the app here is not one `wf dev` starts in development).
  // The starter app's workflow (templates/hono-node/src/app.ts), on the plain node adapter.
  const starter = serve<{ text: string }>(
    async (context) => {
      const upper = await context.run('initial-step', () => context.requestPayload.text.toUpperCase());
      await context.run('second-step', async () => upper.length);
    },
    { token: TOKEN, runnerUrl, baseUrl: appUrl },
  );
  // The same, with a second step that waits for the test.
  const gated = serve<{ text: string }>(
    async (context) => {
      const upper = await context.run('initial-step', () => context.requestPayload.text.toUpperCase());
      await context.run('second-step', async () => (await gate.promise, upper.length));
    },
    { token: TOKEN, runnerUrl, baseUrl: appUrl },
  );
  Object.assign(routes, { '/workflow': starter, '/gated': gated });
});

afterEach(async () => {
  await killAll(shortLived);
});

afterAll(async () => {
  gate.resolve();
  await killAll(shortLived);
  await killAll(longLived);
  if (app) await new Promise<void>((resolve) => (app.closeAllConnections(), app.close(() => resolve())));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('wf dev with the starter workflow', () => {
  let id: string;

  // The run the tests below read; `trigger` checks that `wf trigger` printed one run id and nothing else.
  beforeAll(async () => {
    id = await trigger('/workflow');
  });

  it('logs --follow prints the whole run and exits 0 by itself once it completes', async () => {
    const { code, stdout, stderr } = await wf('logs', id, '--follow');
    expect(code, stderr).toBe(0);
    expect(stdout).toContain('step 0 initial-step succeeded');
    expect(stdout).toContain('step 1 second-step succeeded');
    expect(stdout).toContain('run completed');
  });

  it('logs --follow on a live run prints steps as they commit and ends with the run', async () => {
    gate = deferred();
    const live = await trigger('/gated');
    const logs = spawnCli(['logs', live, '--follow'], devDir, {
      ...BASE_ENV,
      WF_TOKEN: TOKEN,
      WF_RUNNER_URL: runnerUrl,
    });
    await untilOutput(logs, /step 0 initial-step succeeded/);
    expect(logs.stdout).not.toContain('run completed');
    gate.resolve();
    expect(await logs.exited, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('step 1 second-step succeeded');
    expect(logs.stdout).toContain('run completed');
    expect(logs.stdout.trim().split('\n').at(-1)).toBe('(run finished)');
  });

  it('logs --json prints one JSON event per line', async () => {
    const { code, stdout, stderr } = await wf('logs', id, '--json');
    expect(code, stderr).toBe(0);
    const events = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; run?: { id: string; status: string } });
    expect(events.map((e) => e.type)).toEqual(['step', 'step', 'attempt', 'run']);
    expect(events.at(-1)?.run).toMatchObject({ id, status: 'completed' });
  });

  it('runs lists the run as completed, and --json parses', async () => {
    const { code, stdout, stderr } = await wf('runs');
    expect(code, stderr).toBe(0);
    expect(stdout.split('\n').find((line) => line.includes(id))).toMatch(/completed\s+2 steps/);
    const json = await wf('runs', '--json');
    const page = JSON.parse(json.stdout) as { runs: { id: string; status: string }[]; nextCursor: string | null };
    expect(page.runs.find((run) => run.id === id)?.status).toBe('completed');
  });

  it("the dev process prints the run's lines", async () => {
    await vi.waitFor(() => {
      const lines = dev.stdout.split('\n').filter((line) => line.includes(id));
      expect(lines.some((line) => line.includes('step 0 initial-step succeeded'))).toBe(true);
      expect(lines.some((line) => line.includes('step 1 second-step succeeded'))).toBe(true);
      expect(lines.some((line) => line.includes('run completed'))).toBe(true);
    });
  });

  it('cancel stops a live run', async () => {
    gate = deferred();
    const live = await trigger('/gated');
    await vi.waitFor(async () => expect((await runStatus(live)).stepsDone).toBe(1));
    const { code, stdout, stderr } = await wf('cancel', live);
    expect(code, stderr).toBe(0);
    expect(stdout.trim()).toBe(`${live} cancelled`);
    gate.resolve();
    expect((await runStatus(live)).status).toBe('cancelled');
  });

  it('cancel on a completed run fails with one line saying so', async () => {
    const { code, stdout, stderr } = await wf('cancel', id);
    expect(code).not.toBe(0);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain(`Run ${id} is already completed`);
    expect(stderr).not.toMatch(/^\s+at /m);
  });

  it('cancel on an unknown run exits 4', async () => {
    const unknown = 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B';
    const { code, stderr } = await wf('cancel', unknown);
    expect(code, stderr).toBe(4);
    expect(stderr).toContain(`No run with id ${unknown}`);
  });

  it('a wrong token still reads on loopback, but cannot cancel', async () => {
    const runs = await wf('runs', '--token', 'wrong');
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toContain(id);
    const cancel = await wf('cancel', id, '--token', 'wrong');
    expect(cancel.code).not.toBe(0);
    expect(cancel.stderr).toMatch(/401.*token/i);
  });

  it('--debug adds the stack trace to an error', async () => {
    const plain = await wf('cancel', id);
    const debug = await wf('cancel', id, '--debug');
    expect(plain.stderr).not.toMatch(/^\s+at /m);
    expect(debug.code).toBe(plain.code);
    expect(debug.stderr).toContain(plain.stderr.trim());
    expect(debug.stderr).toMatch(/^\s+at /m);
  });

  it('a second wf dev on a port in use fails with one line naming the port', async () => {
    const port = new URL(runnerUrl).port;
    const second = spawnCli(['dev', '--no-tui', '--port', port, '--token', TOKEN], tempDir(), BASE_ENV);
    expect(await second.exited, second.stderr).toBe(1);
    expect(second.stderr.trim().split('\n')).toHaveLength(1);
    expect(second.stderr).toContain(`Port ${port} on 127.0.0.1 is in use`);
  });

  it('Ctrl-C stops it cleanly; the next wf dev in the folder has the earlier runs', async () => {
    dev.proc.kill('SIGINT');
    expect(await dev.exited, dev.stderr).toBe(0);
    expect(dev.stdout).toContain('stopping');
    expect(existsSync(join(devDir, '.wf', 'dev.db'))).toBe(true);

    dev = spawnCli(['dev', '--no-tui', '--port', '0', '--token', TOKEN], devDir, BASE_ENV, true);
    runnerUrl = (await untilOutput(dev, /runner listening on (http:\/\/127\.0\.0\.1:\d+)/))[1]!;
    const { code, stdout, stderr } = await wf('runs');
    expect(code, stderr).toBe(0);
    expect(stdout.split('\n').find((line) => line.includes(id))).toContain('completed');
    dev.proc.kill('SIGINT');
    expect(await dev.exited, dev.stderr).toBe(0);
  });
});
