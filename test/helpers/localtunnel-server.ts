import { randomBytes } from 'node:crypto';
import {
  Agent,
  createServer,
  request as httpRequest,
  type ClientRequestArgs,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';

/**
 * TEST DOUBLE of the public localtunnel service (localtunnel.me), speaking its protocol on
 * 127.0.0.1 so `wf dev --tunnel --tunnel-host <url>` can be tested without the internet:
 *
 * - `GET /?new` or `GET /<name>` registers a client: it gets a TCP port of its own and answers
 *   `{ id, port, max_conn_count, url }`; the client then opens up to `max_conn_count` sockets to it.
 * - Public traffic: the real service routes by Host (`<id>.loca.lt`); loopback has no wildcard DNS,
 *   so here a client's public URL is `http://127.0.0.1:<port>/t/<id>` and the prefix is stripped
 *   before the request goes down one of the client's sockets (by an http.Agent that hands out those
 *   sockets, as the real server does; a request waits while the client has none). Unknown name: 404.
 *
 * `dropSockets` cuts a client's sockets (the library reopens them by itself); `forget` also closes
 * its port and forgets it, as the real server does after a restart, so the client must register again.
 */
export interface LocaltunnelServer {
  /** `http://127.0.0.1:<port>`: what `--tunnel-host` takes. */
  url: string;
  /** Registered names, in order (a re-registration shows twice). */
  readonly registrations: string[];
  /** Ids with at least one open socket. */
  connected(): string[];
  dropSockets(id: string): void;
  forget(id: string): Promise<void>;
  close(): Promise<void>;
}

const NAME = /^(?:[a-z0-9][a-z0-9-]{2,61}[a-z0-9])$/;
const MAX_CONN = 4;

/** An http.Agent whose connections are the sockets the tunnel client opened to us. */
class SocketPoolAgent extends Agent {
  private readonly idle: Socket[] = [];
  private readonly waiting: ((error: Error | null, socket: Duplex) => void)[] = [];
  readonly tunnelSockets = new Set<Socket>();

  constructor() {
    super({ keepAlive: true, maxFreeSockets: 1 });
  }

  add(socket: Socket): void {
    this.tunnelSockets.add(socket);
    socket.once('close', () => {
      this.tunnelSockets.delete(socket);
      const at = this.idle.indexOf(socket);
      if (at !== -1) this.idle.splice(at, 1);
    });
    const next = this.waiting.shift();
    if (next) next(null, socket);
    else this.idle.push(socket);
  }

  // Returning nothing and calling back later is how the real server hands out sockets as they arrive.
  override createConnection(
    _options: ClientRequestArgs,
    callback?: (error: Error | null, socket: Duplex) => void,
  ): undefined {
    if (!callback) return undefined;
    const socket = this.idle.shift();
    if (socket) callback(null, socket);
    else this.waiting.push(callback);
    return undefined;
  }

  /** Cuts the sockets; requests waiting for one keep waiting (the client opens new ones). */
  dropSockets(): void {
    for (const socket of this.tunnelSockets) socket.destroy();
  }

  /** The client is gone: cut its sockets and fail what waits for one. */
  shutDown(): void {
    this.dropSockets();
    for (const cb of this.waiting.splice(0)) cb(new Error('tunnel closed'), undefined as unknown as Duplex);
    this.destroy();
  }
}

interface Client {
  id: string;
  agent: SocketPoolAgent;
  tcp: TcpServer;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

export async function startLocaltunnelServer(): Promise<LocaltunnelServer> {
  const clients = new Map<string, Client>();
  const registrations: string[] = [];
  let base = '';

  async function newClient(wanted: string | undefined): Promise<Client> {
    const id = wanted && NAME.test(wanted) && !clients.has(wanted) ? wanted : randomBytes(5).toString('hex');
    const agent = new SocketPoolAgent();
    const tcp = createTcpServer((socket) => agent.add(socket));
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const client = { id, agent, tcp };
    clients.set(id, client);
    registrations.push(id);
    return client;
  }

  function forward(client: Client, path: string, req: IncomingMessage, res: ServerResponse): void {
    const options = { agent: client.agent, method: req.method, path, headers: req.headers as OutgoingHttpHeaders };
    const upstream = httpRequest(options, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    });
    upstream.on('error', (error) => {
      if (!res.headersSent) json(res, 502, { message: `tunnel error: ${error.message}` });
      else res.destroy();
    });
    req.pipe(upstream);
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://tunnel');
    const publicPath = /^\/t\/([^/]+)(\/.*)?$/.exec(url.pathname);
    if (publicPath) {
      // Like the real server: an unknown name is a 404; a known one waits for a socket of its client.
      const client = clients.get(publicPath[1]!);
      if (!client) return json(res, 404, { message: `no active client for ${publicPath[1]}` });
      return forward(client, (publicPath[2] ?? '/') + url.search, req, res);
    }
    if (req.method !== 'GET') return json(res, 405, { message: 'registration is GET /?new or GET /<name>' });
    const wanted = url.pathname === '/' ? (url.searchParams.has('new') ? undefined : null) : url.pathname.slice(1);
    if (wanted === null) return json(res, 200, { message: 'a localtunnel test server' });
    void newClient(wanted).then((client) => {
      const { port } = client.tcp.address() as AddressInfo;
      json(res, 200, { id: client.id, port, max_conn_count: MAX_CONN, url: `${base}/t/${client.id}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function forget(id: string): Promise<void> {
    const client = clients.get(id);
    if (!client) return;
    clients.delete(id);
    const closed = new Promise<void>((resolve) => client.tcp.close(() => resolve()));
    client.agent.shutDown();
    await closed;
  }

  return {
    url: base,
    registrations,
    connected: () => [...clients.values()].filter((c) => c.agent.tunnelSockets.size > 0).map((c) => c.id),
    dropSockets: (id) => clients.get(id)?.agent.dropSockets(),
    forget,
    async close() {
      await Promise.all([...clients.keys()].map(forget));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
