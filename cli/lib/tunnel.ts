import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { CliError } from '../errors.js';

/** The public localtunnel service; `--tunnel-host` points at a self-hosted localtunnel server instead. */
export const DEFAULT_TUNNEL_HOST = 'https://localtunnel.me';

export type TunnelStatus =
  | { type: 'down'; reason: string }
  | { type: 'reconnecting'; attempt: number; of: number; delayMs: number }
  | { type: 'reconnected'; url: string; previous: string }
  | { type: 'failed'; reason: string; attempts: number };

export interface TunnelOptions {
  /** The local port the tunnel forwards to. */
  port: number;
  /** @default DEFAULT_TUNNEL_HOST */
  host?: string;
  /** Ask for this name (`<subdomain>.loca.lt`); the service may hand out another when it is taken. */
  subdomain?: string;
  onStatus?: (status: TunnelStatus) => void;
  /** Reconnect attempts after a drop before giving up. @default 10 */
  maxAttempts?: number;
  /** First reconnect delay; doubles per attempt up to 30 s. @default 500 */
  retryDelayMs?: number;
  /** How long registering and the first connection may take. @default 10000 */
  timeoutMs?: number;
}

export interface Tunnel {
  /** The public URL (the same after a reconnect unless the service handed out another name). */
  readonly url: string;
  close(): void;
}

/** What a localtunnel server answers to `GET /?new` or `GET /<name>`. */
interface Registration {
  id: string;
  port: number;
  url: string;
  ip?: string;
  max_conn_count?: number;
  cached_url?: string;
}

/** The parts of @n8n/localtunnel's `Tunnel` class used here (it ships no types for lib/). */
interface LtClient extends EventEmitter {
  url: string;
  clientId: string;
  _init(cb: (error: Error | null, info?: unknown) => void): void;
  open(cb: (error?: Error) => void): void;
  close(): void;
}
type LtClientClass = new (options: { port: number; host: string; subdomain?: string }) => LtClient;

const MAX_DELAY_MS = 30_000;

function reasonOf(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'no answer in time';
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  return cause?.message ?? (error instanceof Error ? error.message : String(error));
}

async function register(host: string, name: string | undefined, timeoutMs: number): Promise<Registration> {
  const uri = `${host}/${name ?? '?new'}`;
  let response: Response;
  try {
    response = await fetch(uri, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    throw new CliError(
      1,
      'TUNNEL_UNREACHABLE',
      `Cannot reach the tunnel service at ${host}: ${reasonOf(error)} (offline? use --tunnel-host for a self-hosted server)`,
      { cause: error },
    );
  }
  const text = await response.text();
  let body: Partial<Registration> & { message?: string } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {}
  if (!response.ok || typeof body.url !== 'string' || typeof body.port !== 'number' || typeof body.id !== 'string') {
    const said = body.message ?? (text.trim().slice(0, 200) || '(empty body)');
    throw new CliError(
      1,
      'TUNNEL_REFUSED',
      `The tunnel service at ${host} did not open a tunnel (${response.status} to GET ${uri}): ${said}`,
    );
  }
  return body as Registration;
}

/**
 * One localtunnel client: registered by `register` (one bounded request: the library's own
 * registration retries every second forever and cannot be stopped, so `wf dev` could neither
 * report an unreachable service nor quit while it waits), then the library's socket pool
 * (TunnelCluster) carries the traffic. Resolves once the first socket to the service is open.
 */
async function connectOnce(
  Client: LtClientClass,
  options: Required<Pick<TunnelOptions, 'port' | 'timeoutMs'>> & { host: string; name?: string },
): Promise<LtClient> {
  const { host, port, name, timeoutMs } = options;
  const client = new Client({ port, host, subdomain: name });
  // The library emits socket errors as 'error'; unheard, an EventEmitter 'error' would crash `wf dev`.
  client.on('error', () => {});
  client._init = (cb) => {
    register(host, name, timeoutMs).then(
      (body) =>
        cb(null, {
          name: body.id,
          url: body.url,
          cached_url: body.cached_url,
          max_conn: body.max_conn_count || 1,
          remote_host: new URL(host).hostname,
          remote_ip: body.ip,
          remote_port: body.port,
          local_port: port,
        }),
      (error: Error) => cb(error),
    );
  };
  await new Promise<void>((resolve, reject) => client.open((error) => (error ? reject(error) : resolve())));
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no connection to the tunnel port within ${timeoutMs / 1000} s`)),
        timeoutMs,
      );
      client.once('url', () => (clearTimeout(timer), resolve()));
      client.once('error', (error: Error) => (clearTimeout(timer), reject(error)));
    });
  } catch (error) {
    client.close();
    throw new CliError(
      1,
      'TUNNEL_UNREACHABLE',
      `Cannot reach the tunnel service at ${host}: ${reasonOf(error)} (offline? use --tunnel-host for a self-hosted server)`,
      { cause: error },
    );
  }
  return client;
}

/**
 * Opens a public tunnel to `localhost:<port>` with localtunnel (@n8n/localtunnel, the maintained
 * fork) and keeps it up: when the service drops the tunnel (its sockets refuse, as after a server
 * restart), it registers again, asking for the same name so the URL stays, with exponential
 * backoff and at most `maxAttempts` tries, reporting each step through `onStatus`. A dropped socket
 * alone is reopened by the library itself. Throws a one-line `CliError` when the service cannot be
 * reached at the start.
 *
 * @example const tunnel = await openTunnel({ port: 3000, onStatus: console.log }); tunnel.url // https://…loca.lt
 */
export async function openTunnel(options: TunnelOptions): Promise<Tunnel> {
  const require = createRequire(import.meta.url);
  const Client = require('@n8n/localtunnel/lib/Tunnel') as LtClientClass;
  const host = (options.host ?? DEFAULT_TUNNEL_HOST).replace(/\/+$/, '');
  const { port, onStatus = () => {}, maxAttempts = 10, retryDelayMs = 500, timeoutMs = 10_000 } = options;
  const stopped = new AbortController();
  let current = await connectOnce(Client, { host, port, name: options.subdomain, timeoutMs });
  let reconnecting = false;

  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      stopped.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });

  const reconnect = async (reason: string): Promise<void> => {
    reconnecting = true;
    const previous = current.url;
    current.close();
    onStatus({ type: 'down', reason });
    let last = reason;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const delayMs = Math.min(MAX_DELAY_MS, retryDelayMs * 2 ** (attempt - 1));
      onStatus({ type: 'reconnecting', attempt, of: maxAttempts, delayMs });
      await wait(delayMs);
      if (stopped.signal.aborted) return;
      try {
        // The same name again, so the public URL (and WF_WORKFLOW_URL in the app) stays valid.
        current = await connectOnce(Client, { host, port, name: options.subdomain ?? current.clientId, timeoutMs });
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
        continue;
      }
      if (stopped.signal.aborted) return current.close();
      watch(current);
      reconnecting = false;
      onStatus({ type: 'reconnected', url: current.url, previous });
      return;
    }
    onStatus({ type: 'failed', reason: last, attempts: maxAttempts });
  };

  // A refused socket means the service no longer knows this tunnel: register again.
  const watch = (client: LtClient): void => {
    client.on('error', (error: Error) => {
      if (stopped.signal.aborted || reconnecting || client !== current) return;
      // The library's "connection refused: host:port (check your firewall settings)": here it means
      // the service closed this tunnel's port (a restart, or it timed the tunnel out).
      void reconnect(
        error.message.replace(/ \(check your firewall settings\)$/, '') + ': the service no longer has this tunnel',
      );
    });
  };
  watch(current);

  return {
    get url() {
      return current.url;
    },
    close() {
      stopped.abort();
      current.close();
    },
  };
}
