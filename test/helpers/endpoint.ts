import { randomInt } from 'node:crypto';
import { createServer, request, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StartRequest, StepRecord } from '../../protocol/messages.js';
import type { Handle } from '../../serve/core/handler.js';

export interface Endpoint {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  close(): Promise<void>;
}

/** Starts `listener` on node:http at 127.0.0.1 on a free port; `close()` also drops open connections. */
export async function startServer(listener: (req: IncomingMessage, res: ServerResponse) => void): Promise<Endpoint> {
  const server = createServer(listener as RequestListener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * Like {@link startServer}, but the listener is built once the address is known: a route is told
 * its public URL (`baseUrl: origin`), so suites that send forged or relayed Host headers know which
 * URL the route names (with nothing configured it would take the request's own).
 */
export async function startServerFor(
  build: (origin: string) => (req: IncomingMessage, res: ServerResponse) => void,
): Promise<Endpoint> {
  let listener: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  const endpoint = await startServer((req, res) => listener!(req, res));
  listener = build(endpoint.url);
  return endpoint;
}

/**
 * node's request body as a web stream that reads only as the consumer pulls (and drops the rest
 * once cancelled), so tests can tell whether a handler read a body at all.
 */
function pulledBody(req: IncomingMessage): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.pause();
      req.on('data', (chunk: Buffer) => {
        if (done) return;
        controller.enqueue(new Uint8Array(chunk));
        req.pause();
      });
      req.on('end', () => !done && ((done = true), controller.close()));
      req.on('error', (error) => !done && ((done = true), controller.error(error)));
    },
    pull: () => void req.resume(),
    cancel: () => void ((done = true), req.resume()),
  });
}

/** A port nothing listens on (bound, then released): the target of "runner unreachable" tests. */
export async function unusedUrl(): Promise<string> {
  const endpoint = await startServer((_req, res) => res.end());
  await endpoint.close();
  return endpoint.url;
}

/**
 * A minimal node:http -> fetch bridge, independent of every adapter, so the plain `createHandler`
 * can be proven over real HTTP. Streams both bodies chunk by chunk.
 */
export function toNodeListener(handle: Handle): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      const headers = new Headers();
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        body: hasBody ? pulledBody(req) : null,
        duplex: 'half',
      } as RequestInit);
      const response = await handle(request);
      // A body refused unread (401, 413): the connection cannot carry another request, so close it.
      if (!req.complete) res.setHeader('connection', 'close');
      await writeResponse(response, res);
    })().catch((error: unknown) => res.destroy(error as Error));
  };
}

/** Writes a fetch Response to node's, chunk by chunk (the other half of {@link toNodeListener}). */
export async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) for await (const chunk of response.body) res.write(chunk);
  res.end();
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * TEST DOUBLE of the wfkit runner, for serve's unit tests only (the real runner has its own
 * suites). It records every `POST /v1/runs` it receives, answers 201 `{ workflowRunId }`, and serves
 * `GET /v1/runs/:id/steps` from `steps`. Both endpoints require `Authorization: Bearer <token>`.
 */
export interface FakeRunner extends Endpoint {
  readonly token: string;
  /** Parsed bodies of accepted start requests, in order. */
  readonly starts: StartRequest[];
  /** Ids whose steps were fetched through `GET /v1/runs/:id/steps`, in order. */
  readonly stepFetches: string[];
  /** What `GET /v1/runs/:id/steps` answers, by run id (unknown ids get 404). */
  readonly steps: Map<string, StepRecord[]>;
}

function newRunId(): string {
  let id = 'wfr_';
  for (let i = 0; i < 26; i++) id += CROCKFORD[randomInt(32)];
  return id;
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** Starts a {@link FakeRunner} on 127.0.0.1. */
export async function fakeRunner(token = 'runner-test-token'): Promise<FakeRunner> {
  const starts: StartRequest[] = [];
  const stepFetches: string[] = [];
  const steps = new Map<string, StepRecord[]>();
  const byIdempotencyKey = new Map<string, string>();

  const endpoint = await startServer((req, res) => {
    void (async () => {
      let text = '';
      for await (const chunk of req) text += String(chunk);
      if (req.headers.authorization !== `Bearer ${token}`) {
        return json(res, 401, { error: { code: 'UNAUTHORIZED', message: 'Expected a valid bearer token.' } });
      }
      const path = new URL(req.url ?? '/', 'http://runner').pathname;
      if (req.method === 'POST' && path === '/v1/runs') {
        const start = JSON.parse(text) as StartRequest;
        starts.push(start);
        const key = start.idempotencyKey;
        const id = (key && byIdempotencyKey.get(key)) || newRunId();
        if (key) byIdempotencyKey.set(key, id);
        return json(res, 201, { workflowRunId: id });
      }
      const match = /^\/v1\/runs\/([^/]+)\/steps$/.exec(path);
      if (req.method === 'GET' && match) {
        const id = decodeURIComponent(match[1]!);
        stepFetches.push(id);
        const recorded = steps.get(id);
        return recorded
          ? json(res, 200, { steps: recorded })
          : json(res, 404, { error: { code: 'NOT_FOUND', message: `No run ${id}.` } });
      }
      json(res, 404, { error: { code: 'NOT_FOUND', message: `No route ${req.method} ${path}.` } });
    })().catch((error: unknown) => res.destroy(error as Error));
  });
  return { ...endpoint, token, starts, stepFetches, steps };
}

/** A POST to `url` that says `Host: <host>` (fetch cannot set Host): a client forging or relaying it. */
export function postWithHost(
  url: string,
  host: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', ...headers, host },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
