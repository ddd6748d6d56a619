import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setPublicUrl } from './alerts/options.js';
import { createApiServer, type ApiOptions } from './api/server.js';
import { DatabaseOpenError, RunnerConfigError } from './errors.js';
import { Histogram, instrumentStore, renderMetrics } from './telemetry/metrics.js';
import { Runner, type RunnerOptions } from './runner.js';
import { resolveRunnerOptions, type ResolvedRunnerOptions } from './runner-options.js';
import { openStore, parseDatabaseUrl, redactDatabaseUrl } from './store/index.js';
import type { Store } from './store/types.js';
import type { OtelConfig } from './telemetry/otel-config.js';
import type { Tracing } from './telemetry/tracing.js';

export interface CreateRunnerOptions extends Omit<RunnerOptions, 'store' | 'exclusive'> {
  /**
   * An open store (the caller closes it), or `database`: `postgres://…` (several runners share it)
   * or a SQLite file path (one runner), opened here and closed by `close`. Exactly one of the two.
   */
  store?: Store;
  database?: string;
  /**
   * This runner is the store's only user: leftover leases are taken over on start.
   * @default true for a SQLite `database`, false otherwise
   */
  exclusive?: boolean;
  /** Address the API binds. @default 127.0.0.1 */
  host?: string;
  /** Port of the API; 0 picks a free one (see `url`). @default 7766 */
  port?: number;
  /** Everything else the HTTP API takes (limits, dashboard folder, open loopback reads). */
  api?: Omit<ApiOptions, 'host' | 'metrics'>;
  /**
   * Export traces over OTLP (a span per run, drive and step; a `traceparent` on every drive request).
   * The OpenTelemetry packages are loaded only when this is set; `otelConfigFromEnv` reads the
   * standard `OTEL_*` variables into it. Ignored when `tracing` is given. @default no traces
   */
  otel?: OtelConfig;
}

export interface CreatedRunner {
  runner: Runner;
  server: Server;
  /** `http://host:port` the API listens on. */
  url: string;
  /** What the store is (`sqlite`, `postgres`, or `custom` for a `store` passed in). */
  storeKind: 'sqlite' | 'postgres' | 'custom';
  /** The database, password redacted, for logs (undefined for a `store` passed in). */
  database: string | undefined;
  /** Stops accepting connections, gives in-flight drives `graceMs` to finish, releases the rest, closes a store it opened. */
  close(graceMs: number): Promise<void>;
}

/**
 * The runner's composition root: opens the store (or takes one), builds the `Runner`, serves its
 * HTTP API, web dashboard and `/metrics`, and starts driving. What `wf start` and `wf dev` run, and
 * what an embedder calls instead of wiring the parts by hand.
 *
 * @example
 * const { url, close } = await createRunner({ database: 'postgres://db/wf', tokens: [process.env.WF_TOKEN!], allowedOrigins: ['https://app.example.com'] });
 * process.on('SIGTERM', () => void close(10_000));
 * @throws DatabaseOpenError, RunnerConfigError, or the server's listen error (`code` EADDRINUSE, …)
 */
export async function createRunner(options: CreateRunnerOptions): Promise<CreatedRunner> {
  const {
    store: given,
    database: target,
    exclusive,
    host = '127.0.0.1',
    port = 7766,
    api,
    otel,
    ...runnerOptions
  } = options;
  if ((given === undefined) === (target === undefined)) {
    throw new RunnerConfigError(
      `createRunner needs exactly one of store (an open Store) and database (a postgres:// URL or a SQLite path); got ${given ? 'both' : 'neither'}.`,
    );
  }
  let kind: CreatedRunner['storeKind'] = 'custom';
  let database: string | undefined;
  let opened = given;
  if (target !== undefined) {
    const location = (() => {
      try {
        return parseDatabaseUrl(target);
      } catch (error) {
        throw new RunnerConfigError((error as Error).message, { cause: error });
      }
    })();
    kind = location.kind;
    database = kind === 'sqlite' ? target : redactDatabaseUrl(target);
    opened = await openStore(target).catch((error: unknown) => {
      throw new DatabaseOpenError(database!, { cause: error });
    });
  }
  const closeStore = async (): Promise<void> => {
    if (target !== undefined) await opened!.close();
  };
  // Every default once (runner-options.ts); on SQLite this runner is the file's only user.
  let resolved: ResolvedRunnerOptions;
  try {
    resolved = resolveRunnerOptions({ ...runnerOptions, store: opened!, exclusive: exclusive ?? kind === 'sqlite' });
  } catch (error) {
    await closeStore();
    throw new RunnerConfigError((error as Error).message, { cause: error });
  }
  // Loaded here, not imported above: without an endpoint no @opentelemetry package is ever loaded.
  let tracing: Tracing | undefined = resolved.tracing;
  if (!tracing && otel) {
    try {
      const { createOtelTracing } = await import('./telemetry/otel-tracing.js');
      tracing = await createOtelTracing(otel, resolved.logger);
    } catch (error) {
      await closeStore();
      throw new RunnerConfigError(
        `Could not set up the OpenTelemetry export to ${otel.endpoint}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  const stepDuration = new Histogram();
  const store = instrumentStore(opened!, stepDuration);
  let runner: Runner;
  try {
    runner = new Runner({ ...resolved, tracing, store });
  } catch (error) {
    await tracing?.shutdown();
    await closeStore();
    throw new RunnerConfigError((error as Error).message, { cause: error });
  }
  const server = createApiServer(runner, { ...api, host, metrics: () => renderMetrics({ runner, stepDuration }) });
  try {
    await new Promise<void>((done, reject) => {
      server.once('error', reject);
      server.listen(port, host, done);
    });
    // The alert's dashboard link: where this server listens, unless the options said otherwise.
    if (runner.alerts && runner.alerts.publicUrl === undefined)
      setPublicUrl(runner.alerts, listenUrl(host, (server.address() as AddressInfo).port));
    await runner.start();
  } catch (error) {
    server.close();
    await runner.stop(0);
    await closeStore();
    throw error;
  }
  const { port: bound } = server.address() as AddressInfo;
  return {
    runner,
    server,
    url: listenUrl(host, bound),
    storeKind: kind,
    database,
    async close(graceMs) {
      // No new connections; requests on open ones are still answered (a start then waits in the
      // store for the next runner: a stopping runner does not drive new runs).
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeIdleConnections();
      await runner.stop(graceMs);
      server.closeAllConnections();
      await closed;
      await closeStore();
    },
  };
}

function listenUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
