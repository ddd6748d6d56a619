import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import { frameworkNamed, type Framework } from '../../cli/lib/frameworks.js';
import { startLocalRunner, type LocalRunner } from '../../cli/lib/local-runner.js';
import { decodeValue } from '../../protocol/values.js';
import type { Endpoint } from '../helpers/endpoint.js';
import { packBoth } from '../helpers/packages.js';
import { unusedPort, waitForFinish } from '../helpers/runner.js';
import { spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import { forwardingProxy } from './forwarding-proxy.js';
import { run, startServer, stopServer, waitUntilServing, type Child } from './harness.js';

/**
 * The proof on the real frameworks: `wf init` (from the assembled wfkit-cli package) into a temp
 * folder, both packed tarballs installed (`wfkit`, which the route imports, and `wfkit-cli`, the
 * starter's devDependency), then on the same install:
 * - development: the framework's own dev server on 127.0.0.1 (a free port; the env file names it
 *   as WF_WORKFLOW_URL, as `wf dev --tunnel` would), the real runner (SQLite) in this process, one
 *   POST, the finished run read back from the runner;
 * - production: the starter's production build, started with only WF_TOKEN and WF_RUNNER_URL (no
 *   URL configured: the route takes its own request's URL), against `wf start` that allows only
 *   the app's loopback origin.
 * Hosts run one after another (vitest project `frameworks`, `fileParallelism: false`).
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Free ports for one server: the one it serves on, and one for its debugger where it opens one (wrangler). */
export interface Ports {
  app: number;
  spare: number;
}

/** A command line, with variables added to the clean child environment. */
export interface Launch {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

export interface HostSpec {
  /** `wf init --framework` value. */
  framework: string;
  /** The starter's dev server on 127.0.0.1:`ports.app`. */
  dev: (ports: Ports) => Launch;
  /** The starter's production build (none for hosts that run the source, or wrangler), then its server on 127.0.0.1:`ports.app`. */
  production: {
    build?: Launch;
    start: (ports: Ports) => Launch;
    /** Serve it behind a reverse proxy that adds these headers (the app's public origin is then the proxy's). */
    proxyHeaders?: Record<string, string>;
  };
}

/** `npm run <script> -- <args>`. */
export function npmScript(script: string, ...args: string[]): Launch {
  return { command: 'npm', args: ['run', script, ...(args.length > 0 ? ['--', ...args] : [])] };
}

/** Replaces the env file with exactly these variables. */
function writeEnvFile(path: string, values: Record<string, string>): void {
  writeFileSync(
    path,
    Object.entries(values)
      .map(([key, value]) => `${key}=${value}`)
      .join('\n') + '\n',
  );
}

async function freePorts(): Promise<Ports> {
  return { app: await unusedPort(), spare: await unusedPort() };
}

const seconds = (ms: number): string => (ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`);

/** The whole proof for one host, as one describe block. */
export function describeHost(spec: HostSpec): void {
  const framework: Framework = frameworkNamed(spec.framework)!;

  describe(`${framework.label}: wf init, the real dev server and the production build, one run each`, () => {
    let work = '';
    let app = '';
    let envPath = '';
    let initialEnv: Record<string, string> = {};
    let runner: LocalRunner | undefined;
    let devPort = 0;
    let dev: Child | undefined;
    let prod: Child | undefined;
    let wfStart: WfStartProcess | undefined;
    let proxy: Endpoint | undefined;
    const timings: Record<string, number> = {};
    const timed = async <T>(label: string, step: () => Promise<T>): Promise<T> => {
      const started = Date.now();
      try {
        return await step();
      } finally {
        timings[label] = Date.now() - started;
      }
    };
    const launch = (what: Launch): Child => startServer(what.command, what.args, app, what.env);

    beforeAll(async () => {
      work = mkdtempSync(join(tmpdir(), `wfkit-${framework.name}-`));
      app = join(work, 'app');
      const tarballs = await timed('pack', async () => packBoth());
      const init = await timed('init', () =>
        run(
          process.execPath,
          [join(ROOT, 'packages/cli/dist/cli/index.js'), 'init', 'app', '--framework', framework.name],
          work,
        ),
      );
      expect(init).toContain('Next:');
      const pkgPath = join(app, 'package.json');
      const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
      pkg.dependencies.wfkit = `file:${tarballs.sdk}`;
      pkg.devDependencies['wfkit-cli'] = `file:${tarballs.cli}`;
      writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
      await timed('install', () =>
        run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app, 600_000),
      );

      envPath = join(app, framework.envFile);
      initialEnv = parseEnv(readFileSync(envPath, 'utf8')) as Record<string, string>;
      runner = await startLocalRunner({
        dbPath: join(work, 'runner.db'),
        host: '127.0.0.1',
        port: 0,
        tokens: [initialEnv.WF_TOKEN!],
      });
      const ports = await freePorts();
      devPort = ports.app;
      // A free port rather than the starter's default: the app tells the runner where it is the way
      // `wf dev --tunnel` does, with WF_WORKFLOW_URL.
      writeEnvFile(envPath, {
        ...initialEnv,
        WF_RUNNER_URL: runner.url,
        WF_WORKFLOW_URL: `http://localhost:${devPort}`,
      });
      dev = launch(spec.dev(ports));
      await timed('dev server ready', () => waitUntilServing(dev!, `http://127.0.0.1:${devPort}/`, 180_000));
    }, 900_000);

    afterAll(async () => {
      await stopServer(dev);
      await stopServer(prod);
      await proxy?.close();
      if (wfStart?.running()) wfStart.child.kill('SIGTERM');
      await wfStart?.exited;
      await runner?.close();
      if (work) rmSync(work, { recursive: true, force: true });
      console.log(
        `[${framework.name}] ${Object.entries(timings)
          .map(([k, ms]) => `${k} ${seconds(ms)}`)
          .join(' · ')}`,
      );
    });

    it('dev server: POST {"text":"hello"} starts a run that completes with both steps', async () => {
      const url = `http://127.0.0.1:${devPort}${framework.routePath}`;
      const response = await timed('start', () =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"hello"}' }),
      );
      const text = await response.text();
      if (response.status !== 200)
        throw new Error(
          `POST ${url} answered ${response.status}: ${text}\n--- dev server output ---\n${dev!.output()}`,
        );
      const { workflowRunId } = JSON.parse(text) as { workflowRunId: string };
      expect(workflowRunId).toMatch(/^wfr_[0-9A-Z]{26}$/);

      const finished = await timed('run', () =>
        waitForFinish(runner!.runner, workflowRunId, 120_000).catch((error: Error) => {
          throw new Error(`${error.message}\n--- dev server output ---\n${dev!.output()}`);
        }),
      );
      const { run: done, steps } = finished;
      timings['run created→finished'] = (done.finishedAt ?? done.updatedAt) - done.createdAt;
      expect(done.status, `run ended ${done.status}: ${JSON.stringify(done.error)}\n${dev!.output()}`).toBe(
        'completed',
      );
      expect(done.url).toBe(`http://localhost:${devPort}${framework.routePath}`);
      expect(steps.map((s) => [s.name, s.status, decodeValue(s.output ?? undefined)])).toEqual([
        ['initial-step', 'succeeded', 'HELLO'],
        ['second-step', 'succeeded', 5],
      ]);
      // The second step logs inside the framework's server: the step really ran there.
      await expect.poll(() => dev!.output(), { timeout: 10_000 }).toContain('HELLO');
    });

    it("has `npx wfkit` from the starter's devDependency wfkit-cli", async () => {
      expect(await run('npx', ['--no-install', 'wfkit', '--help'], app)).toMatch(/Usage: wf/);
    });

    it('type-checks', async () => {
      // After the dev server stopped: some type checks regenerate what it writes (.nuxt, .svelte-kit).
      await stopServer(dev);
      await timed('typecheck', () => run('npm', ['run', 'typecheck'], app, 180_000));
    });

    it('production build, started with only WF_TOKEN and WF_RUNNER_URL: the start answers a run id and the run completes against wf start', async () => {
      await stopServer(dev);
      const ports = await freePorts();
      const server = `http://127.0.0.1:${ports.app}`;
      if (spec.production.proxyHeaders) proxy = await forwardingProxy(server, spec.production.proxyHeaders);
      const origin = proxy?.url ?? server;
      // Some servers hand the route `localhost` for the address they bind (next start does).
      const loopback = [origin, origin.replace('127.0.0.1', 'localhost')];
      const token = `wf_${randomBytes(32).toString('hex')}`;
      // The operator's lock: this runner calls the app's loopback origin and nothing else.
      wfStart = await spawnWfStart(
        ['--database', join(work, 'production.db'), ...loopback.flatMap((o) => ['--allow-origin', o])],
        { WF_TOKENS: token, WF_ALLOWED_ORIGINS: '' },
      );
      const variables = { WF_TOKEN: token, WF_RUNNER_URL: wfStart.url };
      // The env file too, for the hosts that read it in production (next start, wrangler): the same two, nothing URL-related.
      writeEnvFile(envPath, variables);
      const env = { ...variables, NODE_ENV: 'production' };
      const build = spec.production.build;
      if (build)
        await timed('production build', () => run(build.command, build.args, app, 600_000, { ...env, ...build.env }));
      const launchSpec = spec.production.start(ports);
      prod = launch({ ...launchSpec, env: { ...env, HOST: '127.0.0.1', PORT: String(ports.app), ...launchSpec.env } });
      await timed('production server ready', () => waitUntilServing(prod!, `${server}/`, 180_000));

      const url = `${origin}${framework.routePath}`;
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"text":"prod"}',
      });
      const text = await response.text();
      if (response.status !== 200)
        throw new Error(`POST ${url} answered ${response.status}: ${text}\n--- server output ---\n${prod.output()}`);
      const { workflowRunId } = JSON.parse(text) as { workflowRunId: string };
      expect(workflowRunId).toMatch(/^wfr_[0-9A-Z]{26}$/);

      const client = new Client({ runnerUrl: wfStart.url, token });
      let detail = await client.get(workflowRunId);
      const deadline = Date.now() + 120_000;
      while (!['completed', 'failed', 'cancelled'].includes(detail.run.status) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        detail = await client.get(workflowRunId);
      }
      const context = `${JSON.stringify(detail.run)}\n--- server output ---\n${prod.output()}\n--- wf start ---\n${wfStart.stdout()}${wfStart.stderr()}`;
      expect(detail.run.status, context).toBe('completed');
      // The URL the route worked out from its own request: the runner called that.
      expect(loopback.map((o) => `${o}${framework.routePath}`)).toContain(detail.run.url);
      expect(detail.steps.map((s) => [s.name, s.status, s.output])).toEqual([
        ['initial-step', 'succeeded', 'PROD'],
        ['second-step', 'succeeded', 4],
      ]);
    });
  });
}
