import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRunnerFetch, runnerFetch, type RunnerFetch } from '../../serve/core/runner-fetch.js';

interface Seen {
  method: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let origin = '';
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      seen.push({ method: req.method, headers: req.headers, body });
      const status = req.url === '/refuse' ? 403 : 201;
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ echoed: body, ü: 'ü' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Which client sent a request: fetch adds `sec-fetch-mode` (the Fetch standard's), node:http does not. */
const clients: [string, RunnerFetch, string | undefined][] = [
  ['node:http (found through process.getBuiltinModule)', runnerFetch, undefined],
  ['fetch (a host without node:http)', createRunnerFetch(() => undefined), 'cors'],
];

describe.each(clients)('the route’s runner client on %s', (_, client, fetchMode) => {
  it('sends the method, headers and body, and reads the status and the whole answer', async () => {
    const body = JSON.stringify({ url: 'http://app.example/api/wf', body: '{"text":"ü"}' });
    const answer = await client(`${origin}/v1/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer t0ken' },
      body,
    });
    expect([answer.status, answer.ok]).toEqual([201, true]);
    expect(JSON.parse(await answer.text())).toEqual({ echoed: body, ü: 'ü' });
    const request = seen.at(-1)!;
    expect(request.method).toBe('POST');
    expect(request.body).toBe(body);
    expect(request.headers.authorization).toBe('Bearer t0ken');
    expect(request.headers['sec-fetch-mode']).toBe(fetchMode);
    expect(Number(request.headers['content-length'])).toBe(new TextEncoder().encode(body).byteLength);
  });

  it('sends a GET without a body, and gives a refusal as a status, not an error', async () => {
    const answer = await client(`${origin}/refuse`, { method: 'GET', headers: { authorization: 'Bearer t0ken' } });
    expect([answer.status, answer.ok]).toEqual([403, false]);
    expect(seen.at(-1)).toMatchObject({ method: 'GET', body: '' });
  });

  it('rejects when nothing listens at the address', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(client(`http://127.0.0.1:${port}/v1/runs`, { method: 'GET', headers: {} })).rejects.toThrow();
  });
});

describe('the route’s node:http runner client and idle connections', () => {
  it('reuses a connection at once, and not one idle past a second under the server’s 5 s limit', async () => {
    // Reused that late, a request could cross the server's close of the connection: ECONNRESET.
    const idle = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(201, { 'content-length': 2 }).end('{}'));
    });
    let connections = 0;
    idle.on('connection', () => connections++);
    await new Promise<void>((resolve) => idle.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(idle.address() as { port: number }).port}/v1/runs`;
      const client = createRunnerFetch();
      for (let i = 0; i < 2; i++)
        expect((await client(url, { method: 'POST', headers: {}, body: '{}' })).status).toBe(201);
      expect(connections).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 4_300));
      expect((await client(url, { method: 'POST', headers: {}, body: '{}' })).status).toBe(201);
      expect(connections).toBe(2);
    } finally {
      idle.closeAllConnections();
      await new Promise((resolve) => idle.close(resolve));
    }
  }, 15_000);
});
