import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { serve as serveNode } from '@hono/node-server';
import { H3, serve as serveH3 } from 'h3';
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeOutcome, OutcomeLineSplitter, type Outcome } from '../../protocol/outcome.js';
import { encodeValue } from '../../protocol/values.js';
import { serve as cloudflareServe } from '../../serve/adapters/cloudflare.js';
import { serve as h3Serve } from '../../serve/adapters/h3.js';
import { serve as honoServe } from '../../serve/adapters/hono.js';
import { serve as nextServe } from '../../serve/adapters/nextjs.js';
import { serve as nodeServe } from '../../serve/adapters/node.js';
import { serve as solidServe } from '../../serve/adapters/solidjs.js';
import { serve as svelteServe } from '../../serve/adapters/svelte.js';
import { createHandler, type ServeOptions, type Workflow } from '../../serve/core/handler.js';
import { serve as plainServe } from '../../serve/index.js';
import { driveRequest } from '../helpers/drive.js';
import { startServer, startServerFor, toNodeListener, writeResponse, type Endpoint } from '../helpers/endpoint.js';
import { describeAdapter } from './conformance.js';
import type { Mount } from './conformance-mount.js';

const ROUTE = '/api/workflow';

// Each mount builds its route once the address is known: `options(origin)` tells it its public URL.
describeAdapter('node', async (workflow, options) => {
  const endpoint = await startServerFor((origin) => nodeServe(workflow, options(origin)));
  return { url: endpoint.url + ROUTE, close: endpoint.close };
});

describeAdapter('hono (node-server)', async (workflow, options) => {
  const app = new Hono();
  const server = await new Promise<Server>((resolve) => {
    const s = serveNode({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s as Server));
  });
  const { port } = server.address() as AddressInfo;
  // `all`, not `post`: the 405 for other methods is the handler's policy, not the router's 404.
  app.all(ROUTE, honoServe(workflow, options(`http://127.0.0.1:${port}`)));
  return {
    url: `http://127.0.0.1:${port}${ROUTE}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
});

describeAdapter('fetch (createHandler)', async (workflow, options) => {
  const endpoint = await startServerFor((origin) => toNodeListener(createHandler(workflow, options(origin))));
  return { url: endpoint.url + ROUTE, close: endpoint.close };
});

/** A fetch-style host: builds the route as its framework would and calls its exported shape. */
type FetchHost = (workflow: Workflow<any, any>, options: ServeOptions) => (request: Request) => Promise<Response>;

// The hosts below hand the adapter an event, not a socket: each is called the way its framework
// calls the exported shape. The real frameworks run the same files in test/frameworks/*.e2e.test.ts.
const FETCH_HOSTS: Record<string, FetchHost> = {
  svelte: (workflow, options) => {
    const POST = svelteServe(workflow, options);
    return (request) => POST({ request, platform: undefined });
  },
  nextjs: (workflow, options) => nextServe(workflow, options).POST,
  solidjs: (workflow, options) => {
    const POST = solidServe(workflow, options);
    return (request) => POST({ request });
  },
  cloudflare: (workflow, options) => {
    const worker = { fetch: cloudflareServe(workflow, options) };
    return (request) => worker.fetch(request, {}, { waitUntil: () => {} });
  },
  'h3 v2 (event.req)': (workflow, options) => {
    const handler = h3Serve(workflow, options);
    return (request) => handler({ req: request, context: {} });
  },
  'hono app.request': (workflow, options) => {
    const app = new Hono().all(ROUTE, honoServe(workflow, options));
    return (request) => Promise.resolve(app.request(request));
  },
  'hono app.fetch': (workflow, options) => {
    const app = new Hono().all(ROUTE, honoServe(workflow, options));
    return (request) => Promise.resolve(app.fetch(request));
  },
  'h3 v2 app.fetch': (workflow, options) => {
    const app = new H3().all(ROUTE, h3Serve(workflow, options));
    return (request) => Promise.resolve(app.fetch(request));
  },
  'plain serve': (workflow, options) => plainServe(workflow, options),
};

// The adapters' own shapes also behind the node:http -> fetch bridge on a real port (what a port
// adds: the bridge, Host headers, raw request lines, slow bodies; hono, h3 apps and plain serve
// meet those in the real-server mounts above and below)...
const BRIDGED = ['svelte', 'nextjs', 'solidjs', 'cloudflare', 'h3 v2 (event.req)'];
for (const [name, host] of Object.entries(FETCH_HOSTS).filter(([name]) => BRIDGED.includes(name))) {
  describeAdapter(name, async (workflow, options) => {
    const endpoint = await startServerFor((origin) => toNodeListener(host(workflow, options(origin))));
    return { url: endpoint.url + ROUTE, close: endpoint.close };
  });
}

// ...and with no socket at all, the way hono and h3 test: `new Request` -> handler -> `Response`.
let socketlessHosts = 0;
for (const [name, host] of Object.entries(FETCH_HOSTS)) {
  const mount: Mount = async (workflow, options) => {
    // A name no socket answers: a request the suite sent over the network instead would fail.
    const origin = `http://app-${++socketlessHosts}.socketless.invalid`;
    return { url: origin + ROUTE, close: async () => {}, handle: host(workflow, options(origin)) };
  };
  describeAdapter(`${name} (socketless)`, mount, true);
}

describeAdapter('h3 v2 (a real H3 app on its own node server)', async (workflow, options) => {
  const app = new H3();
  let route: ReturnType<typeof h3Serve> | undefined;
  // `all`, not `post`: the 405 for other methods is the handler's policy, not the router's.
  // H3 takes no routes once serving, so this one delegates to the route built when the port is known.
  app.all(ROUTE, (event) => route!(event));
  const server = serveH3(app, { port: 0, hostname: '127.0.0.1', silent: true });
  await server.ready();
  route = h3Serve(workflow, options(new URL(server.url!).origin));
  return { url: new URL(ROUTE, server.url).href, close: () => server.close(true) };
});

describeAdapter('h3 v1 (event.node.req)', async (workflow, options) => {
  const endpoint = await startServerFor((origin) => {
    const handler = h3Serve(workflow, options(origin));
    return (req, res) => {
      void handler({ node: { req }, context: {} })
        .then((response) => writeResponse(response, res))
        .catch((error: unknown) => res.destroy(error as Error));
    };
  });
  return { url: endpoint.url + ROUTE, close: endpoint.close };
});

const TOKEN = 'streaming-test-token';

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Reads decoded lines from a response body into `lines` until a chunk brought one for which `until` holds. */
async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  splitter: OutcomeLineSplitter,
  lines: Outcome[],
  until: (o: Outcome) => boolean,
): Promise<void> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`The stream ended before the expected line; got ${JSON.stringify(lines)}`);
    const decoded = splitter.push(value).map(decodeOutcome);
    lines.push(...decoded);
    if (decoded.some(until)) return;
  }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('node adapter', () => {
  const open: Endpoint[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
  });

  /** Three steps; the second waits for the test. `serverClosed` resolves when the route's response closes. */
  async function gatedRoute(): Promise<{
    url: string;
    gate: ReturnType<typeof deferred<string>>;
    calls: { second: number; third: number };
    serverClosed: Promise<void>;
  }> {
    const gate = deferred<string>();
    const closed = deferred();
    const calls = { second: 0, third: 0 };
    const workflow: Workflow = async (context) => {
      const first = await context.run('first', () => 'one');
      const second = await context.run('second', async () => {
        const value = await gate.promise;
        calls.second++;
        return value;
      });
      const third = await context.run('third', () => calls.third++);
      return [first, second, third];
    };
    const endpoint = await startServerFor((origin) => {
      const listener = nodeServe(workflow, { token: TOKEN, runnerUrl: 'http://127.0.0.1:9', baseUrl: origin });
      return (req, res) => {
        res.on('close', () => closed.resolve());
        void listener(req, res);
      };
    });
    open.push(endpoint);
    return { url: endpoint.url + ROUTE, gate, calls, serverClosed: closed.promise };
  }

  it('flushes each line as its step finishes', { timeout: 10_000 }, async () => {
    const { url, gate } = await gatedRoute();
    const response = await fetch(await driveRequest(url, TOKEN, { runId: 'wfr_STREAM', body: '', steps: [] }));
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const splitter = new OutcomeLineSplitter();
    const lines: Outcome[] = [];
    // The second step cannot finish until the gate opens, so this returns only if `first` was flushed.
    await readUntil(reader, splitter, lines, (o) => o.t === 'step' && o.name === 'first');
    expect(lines.map((l) => l.t).slice(0, 2)).toEqual(['started', 'step']);
    expect(lines.some((l) => l.t === 'done' || (l.t === 'step' && l.name === 'second'))).toBe(false);
    gate.resolve('two');
    await readUntil(reader, splitter, lines, (o) => o.t === 'done');
    expect(lines.map((l) => ('name' in l ? `${l.t}:${l.name}` : l.t))).toEqual([
      'started:first',
      'step:first',
      'started:second',
      'step:second',
      'started:third',
      'step:third',
      'done',
    ]);
    expect(lines.at(-1)).toEqual({ t: 'done', output: encodeValue(['one', 'two', 0], 'the workflow') });
    expect((await reader.read()).done).toBe(true);
  });

  it('survives the runner hanging up mid-stream, and starts no new step after it', { timeout: 10_000 }, async () => {
    const { url, gate, calls, serverClosed } = await gatedRoute();
    const abort = new AbortController();
    const response = await fetch(await driveRequest(url, TOKEN, { runId: 'wfr_HANGUP', body: '', steps: [] }), {
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    await readUntil(reader, new OutcomeLineSplitter(), [], (o) => o.t === 'started' && o.name === 'second');
    abort.abort();
    await serverClosed;
    gate.resolve('too late');
    await vi.waitFor(() => expect(calls.second).toBe(1));
    // A few turns so the session's reactions to the finished step run inside this test
    // (an enqueue on the cancelled stream used to surface here as an unhandled rejection).
    for (let i = 0; i < 5; i++) await turn();
    expect(calls.third).toBe(0);
  });

  it('answers 400 to a request target fetch cannot represent, and keeps serving', async () => {
    const endpoint = await startServer(nodeServe(async () => 1, { token: TOKEN }));
    open.push(endpoint);
    const { port } = new URL(endpoint.url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST http://other.example/x HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
        );
      });
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('Cannot build a request URL from \\"http://other.example/x\\"');
    expect((await fetch(endpoint.url + ROUTE)).status).toBe(405);
  });
});
