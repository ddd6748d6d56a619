import type { Server } from 'node:http';
import { createApiServer } from '../../runner-core/api/server.js';
import { isLoopbackHost } from '../../runner-core/api/http-io.js';
import { Runner, type RunnerOptions } from '../../runner-core/runner.js';
import { openSqliteStore } from '../../runner-core/store/sqlite.js';
import { CliError } from '../errors.js';
import { listen, serverUrl } from './listen.js';

export interface LocalRunnerOptions {
  dbPath: string;
  host: string;
  port: number;
  tokens: string[];
  runner?: Partial<RunnerOptions>;
}

export interface LocalRunner {
  runner: Runner;
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** Opens the SQLite store, starts the runner and its HTTP API; `close` undoes all three in order. */
export async function startLocalRunner(options: LocalRunnerOptions): Promise<LocalRunner> {
  if (!isLoopbackHost(options.host) && options.tokens.length === 0) {
    throw new CliError(2, 'INSECURE', `Refusing to listen on ${options.host} without a token: set WF_TOKEN, or bind to 127.0.0.1.`);
  }
  const store = openSqliteStore(options.dbPath);
  const runner = new Runner({ store, tokens: options.tokens, exclusive: true, ...options.runner });
  const server = createApiServer(runner, { host: options.host });
  await listen(server, options.host, options.port, 'another `wf dev`? Pick another port with --port').catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  await runner.start();
  return {
    runner,
    server,
    url: serverUrl(server, options.host),
    async close() {
      server.closeAllConnections();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await runner.stop();
      await closed;
      await store.close();
    },
  };
}
