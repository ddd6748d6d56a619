import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { afterEach } from 'vitest';
import { Header } from '../../protocol/headers.js';
import { decodeValue } from '../../protocol/values.js';
import type { Workflow } from '../../serve/core/handler.js';
import { startServer } from '../helpers/endpoint.js';
import {
  startApp,
  startTestRunner,
  type AppOptions,
  type TestApp,
  type TestRunner,
  type TestRunnerOptions,
} from '../helpers/runner.js';

/**
 * Shared set-up of the workflow API suites: a real runner (SQLite file, HTTP API) and the real
 * `serve` handler on node:http, both on 127.0.0.1 port 0, closed after each test.
 */

export interface World {
  runner: TestRunner;
  app: TestApp;
  /** Drive requests the app is answering right now (signed POSTs whose response has not closed). */
  openDrives(): number;
}

export interface Target {
  url: string;
  /** Every request received, in order. */
  received: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
}

export interface Worlds {
  /** A fresh runner and an app serving `workflow` against it; retries 10 ms apart unless told. */
  setup(workflow: Workflow<any, any>, app?: Partial<AppOptions>, runner?: TestRunnerOptions): Promise<World>;
  /** One more app on an existing runner. */
  app(runner: TestRunner, workflow: Workflow<any, any>, app?: Partial<AppOptions>): Promise<World>;
  /** A node:http server on 127.0.0.1 answering with `answer` (which may hold the response). */
  target(answer: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<Target>;
  /** Runs at clean-up, before servers close (open gates a test holds, and the like). */
  defer(fn: () => unknown): void;
}

/** Registers the afterEach that closes everything the test opened. */
export function useWorlds(): Worlds {
  const deferred: (() => unknown)[] = [];
  const runners: TestRunner[] = [];
  const servers: { close(): Promise<void> }[] = [];

  afterEach(async () => {
    for (const fn of deferred.splice(0)) await fn();
    for (const runner of runners.splice(0)) await runner.close();
    for (const server of servers.splice(0)) await server.close();
  });

  async function app(
    runner: TestRunner,
    workflow: Workflow<any, any>,
    options: Partial<AppOptions> = {},
  ): Promise<World> {
    let open = 0;
    const started = await startApp(workflow, {
      token: runner.token,
      runnerUrl: runner.url,
      retryDelay: 10,
      ...options,
      wrap: (handler) => (req, res) => {
        if (req.headers[Header.Signature] !== undefined) {
          open++;
          res.on('close', () => open--);
        }
        handler(req, res);
      },
    });
    servers.push(started);
    return { runner, app: started, openDrives: () => open };
  }

  return {
    async setup(workflow, appOptions, runnerOptions) {
      const runner = await startTestRunner(runnerOptions);
      runners.push(runner);
      return app(runner, workflow, appOptions);
    },
    app,
    async target(answer) {
      const received: Target['received'] = [];
      const endpoint = await startServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        req.on('end', () => {
          received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
          answer(req, res, body);
        });
      });
      servers.push(endpoint);
      return { url: endpoint.url, received };
    },
    defer(fn) {
      deferred.push(fn);
    },
  };
}

/** Calls the runner API with the runner's token; answers the status and the parsed JSON body. */
export async function api<T = any>(
  runner: TestRunner,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(runner.url + path, {
    method,
    headers: { authorization: `Bearer ${runner.token}`, 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

/** `POST /v1/events/:eventId` with `{ data }`. */
export function notify(
  runner: TestRunner,
  eventId: string,
  data?: unknown,
): Promise<{ status: number; body: { delivered: string[]; kept: boolean } }> {
  return api(runner, 'POST', `/v1/events/${encodeURIComponent(eventId)}`, data === undefined ? {} : { data });
}

/** A stored value (run or step output) decoded as the route encoded it. */
export function value(text: string | null): unknown {
  return decodeValue(text ?? undefined);
}
