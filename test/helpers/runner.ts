import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vi } from 'vitest';
import type { Hono } from 'hono';
import { createApiApp, type ApiEnv } from '../../runner-core/api/app.js';
import { createApiServer, type ApiOptions } from '../../runner-core/api/server.js';
import { Runner, type RunnerOptions } from '../../runner-core/runner.js';
import { openSqliteStore, type SqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Attempt, Run, Step, Store } from '../../runner-core/store/types.js';
import { serve } from '../../serve/adapters/node.js';
import type { ServeOptions, Workflow } from '../../serve/core/handler.js';

/** The token test runners and apps share unless a test says otherwise. */
export const TEST_TOKEN = 'wf_test_token_0123456789';

export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Listens on 127.0.0.1 (port 0 = any free port) and resolves with the bound port. */
export async function listen(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** Closes a server, dropping keep-alive and streaming connections first so `close` cannot hang. */
export async function closeServer(server: Server): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

export interface TestRunnerOptions {
  /** SQLite file; a fresh one in a new temp folder (removed on close) when absent. */
  dbPath?: string;
  /** @default [TEST_TOKEN] */
  tokens?: string[];
  runner?: Partial<RunnerOptions>;
  /** API policy; `host` here only sets the read-auth policy, the server always binds 127.0.0.1. `openOnLoopback` defaults to true here. */
  api?: Partial<ApiOptions>;
}

export interface TestRunner {
  runner: Runner;
  store: SqliteStore;
  /** `http://127.0.0.1:<port>` of the runner API. */
  url: string;
  dbPath: string;
  token: string;
  /** `METHOD /path?query` of every API request received, in order. */
  requests: string[];
  /** The API's HTTP server, for tests that watch its responses. */
  server: Server;
  /** The same API as a Hono app on the same runner, for tests that need no socket (`requestApp`). */
  app: Hono<ApiEnv>;
  close(): Promise<void>;
}

/** A real Runner (exclusive, on a real SQLite file) and its real HTTP API on 127.0.0.1:0. */
/**
 * Everything `startTestRunner` and `startApp` started since the last `closeStarted()`: a suite's
 * `afterEach(closeStarted)` closes it all (runners first, as a drive in flight ends with its runner).
 */
const started: { runners: TestRunner[]; apps: TestApp[] } = { runners: [], apps: [] };

export async function closeStarted(): Promise<void> {
  const { runners, apps } = started;
  started.runners = [];
  started.apps = [];
  for (const runner of runners) await runner.close();
  for (const app of apps) await app.close();
}

export async function startTestRunner(options: TestRunnerOptions = {}): Promise<TestRunner> {
  const dir = options.dbPath === undefined ? mkdtempSync(join(tmpdir(), 'wfkit-runner-')) : undefined;
  const dbPath = options.dbPath ?? join(dir!, 'runner.db');
  const tokens = options.tokens ?? [TEST_TOKEN];
  const store = openSqliteStore(dbPath);
  const runner = new Runner({ store, tokens, exclusive: true, ...options.runner });
  // Open reads on loopback, as `wf dev`'s runner: the tests that need the closed default say so.
  const apiOptions: ApiOptions = { host: '127.0.0.1', openOnLoopback: true, ...options.api };
  const server = createApiServer(runner, apiOptions);
  const app = createApiApp(runner, apiOptions);
  const requests: string[] = [];
  server.on('request', (req: IncomingMessage) => requests.push(`${req.method} ${req.url}`));
  const port = await listen(server);
  await runner.start();
  let closed = false;
  const test: TestRunner = {
    runner,
    store,
    url: `http://127.0.0.1:${port}`,
    dbPath,
    token: tokens[0] ?? '',
    requests,
    server,
    app,
    async close() {
      if (closed) return;
      closed = true;
      await closeServer(server);
      await runner.stop(0);
      await store.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
  started.runners.push(test);
  return test;
}

/** Reads the run until `predicate` holds; fails with the last state seen after `timeoutMs`. */
export async function waitForRun(
  source: Runner | Store,
  runId: string,
  predicate: (run: Run) => boolean,
  timeoutMs = 10_000,
): Promise<Run> {
  const store = source instanceof Runner ? source.store : source;
  let last: Run | undefined;
  try {
    return await vi.waitFor(
      async () => {
        last = await store.getRun(runId);
        if (!last || !predicate(last)) throw new Error('not yet');
        return last;
      },
      { timeout: timeoutMs, interval: 10 },
    );
  } catch {
    throw new Error(
      `Run ${runId} did not reach the expected state within ${timeoutMs} ms; last seen: ${JSON.stringify(last)}`,
    );
  }
}

/** Waits for a finished status (and a failed run's alert and failureFunction call settled) and returns the run with its steps and attempts. */
export async function waitForFinish(
  source: Runner | Store,
  runId: string,
  timeoutMs = 10_000,
): Promise<{ run: Run; steps: Step[]; attempts: Attempt[] }> {
  const store = source instanceof Runner ? source.store : source;
  const run = await waitForRun(
    store,
    runId,
    (r) => r.finishedAt !== null && r.failureCall !== 'pending' && r.alert !== 'pending',
    timeoutMs,
  );
  return { run, steps: await store.listSteps(runId), attempts: await store.listAttempts(runId) };
}

export interface AppOptions extends ServeOptions {
  token: string;
  runnerUrl: string;
  /** Path the route is mounted at. @default '/workflow' */
  path?: string;
  /** Port to bind on 127.0.0.1. @default 0 (any free port) */
  port?: number;
  /** Puts a listener in front of the real handler, to inject faults a real app cannot produce on demand. */
  wrap?: (handler: NodeListener) => NodeListener;
}

export interface TestApp {
  /** The route's full URL. */
  url: string;
  close(): Promise<void>;
}

/**
 * The real `serve` handler of serve/adapters/node.ts, on node:http at 127.0.0.1. The route is told
 * its public URL (`baseUrl` = the listening address, unless the options name one), so what it names
 * does not depend on the Host a test's client sends.
 */
export async function startApp(workflow: Workflow<any, any>, options: AppOptions): Promise<TestApp> {
  const { path = '/workflow', port = 0, wrap, ...serveOptions } = options;
  let inner: NodeListener | undefined;
  const server = createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://app').pathname !== path || !inner) {
      res.writeHead(404).end();
      return;
    }
    inner(req, res);
  });
  const bound = await listen(server, port);
  const origin = `http://127.0.0.1:${bound}`;
  const handle = serve(
    workflow,
    'baseUrl' in serveOptions || serveOptions.url ? serveOptions : { ...serveOptions, baseUrl: origin },
  );
  const route: NodeListener = (req, res) => {
    handle(req, res).catch((error: unknown) => res.destroy(error as Error));
  };
  inner = wrap ? wrap(route) : route;
  const app: TestApp = { url: `${origin}${path}`, close: () => closeServer(server) };
  started.apps.push(app);
  return app;
}

/** Starts a run the way a client does: POST to the app's route, answered `{ workflowRunId }`. */
export async function startThroughApp(
  appUrl: string,
  payload?: unknown,
  headers: Record<string, string> = {},
): Promise<string> {
  const response = await fetch(appUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: payload === undefined ? '' : JSON.stringify(payload),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`Starting a run through ${appUrl} answered ${response.status}: ${text}`);
  return (JSON.parse(text) as { workflowRunId: string }).workflowRunId;
}

/** A promise with its resolver outside, for steps a test holds open. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Counts calls per key (step executions seen by the app). */
export class Counter {
  readonly counts = new Map<string, number>();
  hit(key: string | number): number {
    const k = String(key);
    const n = (this.counts.get(k) ?? 0) + 1;
    this.counts.set(k, n);
    return n;
  }
  of(key: string | number): number {
    return this.counts.get(String(key)) ?? 0;
  }
}

/** A 127.0.0.1 port nothing listens on (bound, then released): drive requests to it are refused. */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  const port = await listen(server);
  await closeServer(server);
  return port;
}
