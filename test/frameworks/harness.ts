import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { frameworkNamed, type Framework } from '../../cli/lib/frameworks.js';
import { startLocalRunner, type LocalRunner } from '../../cli/lib/local-runner.js';
import { decodeValue } from '../../protocol/values.js';
import { packBoth } from '../helpers/packages.js';
import { waitForFinish } from '../helpers/runner.js';

/**
 * The proof on the real frameworks: `wf init` (from the assembled wfkit-cli package) into a temp
 * folder, both packed tarballs installed (`wfkit`, which the route imports, and `wfkit-cli`, the
 * starter's devDependency), the framework's own dev server on 127.0.0.1, the real runner (SQLite)
 * in this process, one POST, and the finished run read back from the runner. Hosts run one after another
 * (vitest project `frameworks`, `fileParallelism: false`).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const NODE_BIN = dirname(process.execPath);
/** Installs, dev servers and type checks print a lot; failures show the tail. */
const OUTPUT_TAIL = 12_000;

export interface HostSpec {
  /** `wf init --framework` value. */
  framework: string;
  /** Appended to `npm run dev --`: bind 127.0.0.1 on the port the starter's `baseUrl` names. */
  devArgs: string[];
}

/** The environment of every child: Node 24 first on PATH, no telemetry, no test or npm-script leftovers. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // npm_config_cache stays: the installs share the caller's npm cache.
    if (key === 'npm_config_cache' || !/^(npm_|VITEST|VITE_|WF_|SERVICE_)|^(NODE_ENV|TEST|NODE_OPTIONS)$/.test(key)) env[key] = value;
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

/** Starts a command in its own process group (so everything it spawns can be stopped together). */
export function start(command: string, args: string[], cwd: string): Child {
  let output = '';
  const child = spawn(command, args, { cwd, env: childEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
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
export async function run(command: string, args: string[], cwd: string, timeoutMs = 300_000): Promise<string> {
  const child = start(command, args, cwd);
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
// Last resort if the worker dies before afterAll: no dev server outlives the test process.
process.once('exit', () => {
  for (const child of running) if (child.process.pid) try { process.kill(-child.process.pid, 'SIGKILL'); } catch {}
});

async function assertPortFree(port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`Port ${port} on 127.0.0.1 is taken (${error.code}); the starter's dev server needs it. Stop whatever listens there.`)),
    );
    server.listen(port, '127.0.0.1', () => resolve());
  });
  await new Promise((resolve) => server.close(resolve));
}

/** Polls until the dev server answers anything over HTTP; fails at once, with its output, if it exits. */
export async function waitUntilServing(child: Child, url: string, timeoutMs: number): Promise<void> {
  let exited = false;
  void child.exited.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`The dev server exited before it served ${url}:\n${child.output()}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(5_000) });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`The dev server did not serve ${url} within ${timeoutMs / 1000} s:\n${child.output()}`);
}

/** The whole proof for one host, as one describe block. */
export function describeHost(spec: HostSpec): void {
  const framework: Framework = frameworkNamed(spec.framework)!;

  describe(`${framework.label}: wf init, the real dev server, one run`, () => {
    let work = '';
    let app = '';
    let runner: LocalRunner | undefined;
    let dev: Child | undefined;
    const timings: Record<string, number> = {};
    const timed = async <T>(label: string, step: () => Promise<T>): Promise<T> => {
      const started = Date.now();
      try {
        return await step();
      } finally {
        timings[label] = Date.now() - started;
      }
    };

    beforeAll(async () => {
      work = mkdtempSync(join(tmpdir(), `wfkit-${framework.name}-`));
      app = join(work, 'app');
      const tarballs = await timed('pack', async () => packBoth());
      const init = await timed('init', () => run(process.execPath, [join(ROOT, 'packages/cli/dist/cli/index.js'), 'init', 'app', '--framework', framework.name], work));
      expect(init).toContain('Next:');
      const pkgPath = join(app, 'package.json');
      const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
      pkg.dependencies.wfkit = `file:${tarballs.sdk}`;
      pkg.devDependencies['wfkit-cli'] = `file:${tarballs.cli}`;
      writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
      await timed('install', () => run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app, 600_000));

      const envPath = join(app, framework.envFile);
      const token = parseEnv(readFileSync(envPath, 'utf8')).WF_TOKEN!;
      runner = await startLocalRunner({ dbPath: join(work, 'runner.db'), host: '127.0.0.1', port: 0, tokens: [token] });
      writeFileSync(envPath, readFileSync(envPath, 'utf8').replace(/^WF_RUNNER_URL=.*$/m, `WF_RUNNER_URL=${runner.url}`));

      await assertPortFree(framework.devPort);
      dev = start('npm', ['run', 'dev', '--', ...spec.devArgs], app);
      running.add(dev);
      await timed('dev server ready', () => waitUntilServing(dev!, `http://127.0.0.1:${framework.devPort}/`, 180_000));
    }, 900_000);

    afterAll(async () => {
      if (dev) await stop(dev);
      if (dev) running.delete(dev);
      await runner?.close();
      if (work) rmSync(work, { recursive: true, force: true });
      console.log(`[${framework.name}] ${Object.entries(timings).map(([k, ms]) => `${k} ${ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`}`).join(' · ')}`);
    });

    it('POST {"text":"hello"} starts a run that completes with both steps', async () => {
      const url = `http://127.0.0.1:${framework.devPort}${framework.routePath}`;
      const response = await timed('start', () => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"hello"}' }));
      const text = await response.text();
      if (response.status !== 200) throw new Error(`POST ${url} answered ${response.status}: ${text}\n--- dev server output ---\n${dev!.output()}`);
      const { workflowRunId } = JSON.parse(text) as { workflowRunId: string };
      expect(workflowRunId).toMatch(/^wfr_[0-9A-Z]{26}$/);

      const finished = await timed('run', () =>
        waitForFinish(runner!.runner, workflowRunId, 120_000).catch((error: Error) => {
          throw new Error(`${error.message}\n--- dev server output ---\n${dev!.output()}`);
        }),
      );
      const { run: done, steps } = finished;
      timings['run created→finished'] = (done.finishedAt ?? done.updatedAt) - done.createdAt;
      expect(done.status, `run ended ${done.status}: ${JSON.stringify(done.error)}\n${dev!.output()}`).toBe('completed');
      expect(done.url).toBe(`http://localhost:${framework.devPort}${framework.routePath}`);
      expect(steps.map((s) => [s.name, s.status, decodeValue(s.output ?? undefined)])).toEqual([
        ['initial-step', 'succeeded', 'HELLO'],
        ['second-step', 'succeeded', 5],
      ]);
      // The second step logs inside the framework's server: the step really ran there.
      await expect.poll(() => dev!.output(), { timeout: 10_000 }).toContain('HELLO');
    });

    it('has `npx wfkit` from the starter\'s devDependency wfkit-cli', async () => {
      expect(await run('npx', ['--no-install', 'wfkit', '--help'], app)).toMatch(/Usage: wf/);
    });

    it('type-checks', async () => {
      // After the dev server stopped: some type checks regenerate what it writes (.nuxt, .svelte-kit).
      if (dev) await stop(dev);
      await timed('typecheck', () => run('npm', ['run', 'typecheck'], app, 180_000));
    });
  });
}
