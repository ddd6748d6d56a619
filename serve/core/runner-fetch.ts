/**
 * How a route calls its runner (a start's `POST /v1/runs`, the committed steps of a long run):
 * `fetch` everywhere, except where node:http is at hand (Node, Bun and Deno provide it through
 * `process.getBuiltinModule`, made for code that must also run where it is missing). On loopback,
 * Node's `fetch` costs about 0.25 ms more per request than node:http with a keep-alive agent, and a
 * start waits for this call. Only types are spelled here: this module imports nothing node-only.
 */

/** What the route needs of an answer: the same fields a `Response` has. */
export interface RunnerAnswer {
  status: number;
  ok: boolean;
  text(): Promise<string>;
}

export interface RunnerRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

export type RunnerFetch = (url: string, request: RunnerRequest) => Promise<RunnerAnswer>;

interface NodeIncoming {
  statusCode?: number;
  setEncoding(encoding: 'utf8'): void;
  on(event: 'data', listener: (chunk: string) => void): void;
  on(event: 'end', listener: () => void): void;
  on(event: 'error', listener: (error: Error) => void): void;
}

interface NodeClientRequest {
  on(event: 'error', listener: (error: Error) => void): void;
  end(body?: string): void;
}

/** The part of node:http (and node:https) used here. */
export interface NodeHttp {
  Agent: new (options: { keepAlive: boolean; timeout: number }) => unknown;
  request(
    url: string,
    options: { method: string; headers: Record<string, string | number>; agent: unknown },
    onResponse: (response: NodeIncoming) => void,
  ): NodeClientRequest;
}

type BuiltinModules = (id: string) => unknown;

/**
 * How long a connection to the runner may sit idle before it is closed here rather than reused: a
 * second under the runner's own idle limit (node:http's 5 s, which it announces as
 * `Keep-Alive: timeout=5`), as undici's `fetch` does from that header. A request written on a
 * connection the runner is closing at that moment fails with ECONNRESET: a start answered 502.
 */
const IDLE_CONNECTION_MS = 4_000;

/** node:http's `request`, one keep-alive agent per module (idle sockets do not keep the process up). */
function nodeRequester(http: NodeHttp): RunnerFetch {
  const agent = new http.Agent({ keepAlive: true, timeout: IDLE_CONNECTION_MS });
  return (url, { method, headers, body }) =>
    new Promise<RunnerAnswer>((resolve, reject) => {
      const sent = body === undefined ? headers : { ...headers, 'content-length': byteLength(body) };
      const request = http.request(url, { method, headers: sent, agent }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('error', reject);
        response.on('end', () => {
          const status = response.statusCode ?? 0;
          resolve({ status, ok: status >= 200 && status < 300, text: async () => text });
        });
      });
      request.on('error', reject);
      request.end(body);
    });
}

const byteLength = (text: string): number => new TextEncoder().encode(text).byteLength;

const viaFetch: RunnerFetch = (url, { method, headers, body }) =>
  fetch(url, body === undefined ? { method, headers } : { method, headers, body });

function hostBuiltins(): BuiltinModules | undefined {
  const host = (globalThis as { process?: { getBuiltinModule?: BuiltinModules } }).process;
  return host?.getBuiltinModule ? (id) => host.getBuiltinModule!(id) : undefined;
}

/**
 * The runner client for this host: node:http and node:https where `builtin` finds them (by default
 * `process.getBuiltinModule`), `fetch` otherwise.
 */
export function createRunnerFetch(builtin: BuiltinModules | undefined = hostBuiltins()): RunnerFetch {
  const http = builtin?.('node:http') as NodeHttp | undefined;
  const https = builtin?.('node:https') as NodeHttp | undefined;
  if (!http || !https) return viaFetch;
  const plain = nodeRequester(http);
  const secure = nodeRequester(https);
  return (url, request) => {
    if (url.startsWith('http:')) return plain(url, request);
    if (url.startsWith('https:')) return secure(url, request);
    return viaFetch(url, request);
  };
}

/** The one client every route of this process uses. */
export const runnerFetch: RunnerFetch = createRunnerFetch();
