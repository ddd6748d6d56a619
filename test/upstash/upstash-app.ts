import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

/** The Upstash Hono app (fixtures/hono-app.ts) as a child process, configured only through its environment. */

const APP = resolve(import.meta.dirname, 'fixtures/hono-app.ts');

/** The four values an Upstash app reads, plus the optional public URL. */
export interface UpstashEnv {
  QSTASH_URL: string;
  QSTASH_TOKEN: string;
  QSTASH_CURRENT_SIGNING_KEY?: string;
  QSTASH_NEXT_SIGNING_KEY?: string;
  UPSTASH_WORKFLOW_URL?: string;
}

export interface UpstashApp {
  /** `http://127.0.0.1:<port>`; workflows are under `/workflows/<name>`. */
  url: string;
  workflowUrl: (name: string) => string;
  /** Step executions seen by the app, keyed `<runId>:<step>`. */
  counters: () => Promise<Record<string, number>>;
  /** Counters of one run, keyed by step name. */
  countersOf: (runId: string) => Promise<Record<string, number>>;
  output: () => string;
  stop: () => Promise<void>;
}

/** The parent's environment without anything Upstash- or wfkit-flavoured that could leak into the app. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!/^(QSTASH_|UPSTASH_|WF_|SERVICE_|VITEST|NODE_OPTIONS$|PORT$)/.test(key)) env[key] = value;
  return env;
}

/** Starts the app on `port` (default 0: any free port; a restart passes the port it had). */
export async function startUpstashApp(upstash: UpstashEnv, port = 0): Promise<UpstashApp> {
  const child: ChildProcess = spawn(process.execPath, [APP], {
    env: { ...cleanEnv(), ...upstash, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`The Upstash app did not listen within 20 s; its output:\n${output}`)),
      20_000,
    );
    const check = (): void => {
      const match = /upstash app listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        done(match[1]!);
      }
    };
    child.stdout!.on('data', check);
    void exited.then(
      () => (clearTimeout(timer), fail(new Error(`The Upstash app exited before listening; its output:\n${output}`))),
    );
  });
  return upstashAppAt(
    url,
    url,
    () => output,
    async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  );
}

/**
 * The handle of an app that listens at `url` (started here or by `wf dev`); `publicUrl` is the base
 * its workflow URLs carry (its UPSTASH_WORKFLOW_URL when set).
 */
export function upstashAppAt(
  url: string,
  publicUrl: string,
  output: () => string,
  stop: () => Promise<void>,
): UpstashApp {
  const counters = async (): Promise<Record<string, number>> =>
    (await (await fetch(`${url}/counters`)).json()) as Record<string, number>;
  return {
    url,
    workflowUrl: (name) => `${publicUrl}/workflows/${name}`,
    counters,
    async countersOf(runId) {
      const all = await counters();
      return Object.fromEntries(
        Object.entries(all)
          .filter(([key]) => key.startsWith(`${runId}:`))
          .map(([key, n]) => [key.slice(runId.length + 1), n]),
      );
    },
    output,
    stop,
  };
}
