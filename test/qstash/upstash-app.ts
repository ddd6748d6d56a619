import { serve as serveNode, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { serve } from '@upstash/workflow/hono';
import type { WorkflowContext } from '@upstash/workflow';
import type { TestRunner } from '../helpers/runner.js';

/**
 * A real `@upstash/workflow` app on Hono + @hono/node-server at 127.0.0.1:0, configured only by the
 * environment an Upstash user sets (QSTASH_URL, QSTASH_TOKEN, the two signing keys), pointed at a
 * test runner. Routes: `POST /<name>` for each workflow given.
 */
export interface UpstashApp {
  url: string;
  close(): Promise<void>;
}

type WorkflowServeOptions = NonNullable<Parameters<typeof serve>[1]>;

export type RouteFunction = (context: WorkflowContext<any>) => Promise<unknown>;

export function upstashEnv(runner: TestRunner): Record<string, string> {
  const keys = runner.runner.qstash!.signingKeys;
  return {
    QSTASH_URL: runner.url,
    QSTASH_TOKEN: runner.token,
    QSTASH_CURRENT_SIGNING_KEY: keys.current,
    QSTASH_NEXT_SIGNING_KEY: keys.next,
  };
}

export async function startUpstashApp(
  runner: TestRunner,
  workflows: Record<string, { route: RouteFunction; options?: Omit<WorkflowServeOptions, 'env'> }>,
  env: Record<string, string> = upstashEnv(runner),
  /** Plain routes beside the workflows (a `context.call` target, …). */
  extra?: (app: Hono) => void,
  /** @default 0 (any free port) */
  listenPort = 0,
): Promise<UpstashApp> {
  const app = new Hono();
  extra?.(app);
  for (const [name, { route, options }] of Object.entries(workflows))
    app.post(`/${name}`, serve(route, { ...options, env } as WorkflowServeOptions));
  let server: ServerType | undefined;
  const port = await new Promise<number>((resolve) => {
    server = serveNode({ fetch: app.fetch, hostname: '127.0.0.1', port: listenPort }, (info: AddressInfo) =>
      resolve(info.port),
    );
  });
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server!.close(() => resolve());
      }),
  };
}
