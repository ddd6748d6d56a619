import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { closeServer, listen } from './runner.js';

/** One POST the receiver got. */
export interface ReceivedHook {
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it was answered. */
  status: number;
}

/**
 * A loopback webhook receiver (node:http on 127.0.0.1): records every request and answers each
 * with what `answer` says (200 unless told), so a test can play a receiver that is down, refuses,
 * or redirects. `close()` and `listenAgain()` take it off the network and back on the same port.
 */
export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedHook[];
  /** Bodies of the requests answered 2xx, parsed. */
  accepted(): any[];
  /** How to answer the n-th request; `cut`: send the head and a little body, then drop the connection; `delayMs`: answer that much later (a slow receiver). */
  answer: (n: number) => { status: number; headers?: Record<string, string>; cut?: boolean; delayMs?: number };
  close(): Promise<void>;
  listenAgain(): Promise<void>;
}

export async function startWebhookReceiver(port = 0, path = '/hook'): Promise<WebhookReceiver> {
  let server: Server;
  const receiver: WebhookReceiver = {
    url: '',
    port,
    received: [],
    accepted: () => receiver.received.filter((r) => r.status >= 200 && r.status < 300).map((r) => JSON.parse(r.body)),
    answer: () => ({ status: 200 }),
    close: () => closeServer(server),
    async listenAgain() {
      server = make();
      await listen(server, receiver.port);
    },
  };
  const make = (): Server =>
    createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        const { status, headers, cut, delayMs = 0 } = receiver.answer(receiver.received.length + 1);
        receiver.received.push({ headers: req.headers, body, status });
        setTimeout(() => {
          res.writeHead(status, { 'content-type': 'text/plain', ...headers });
          if (!cut) return void res.end(status < 300 ? 'ok' : 'not now');
          res.write('partial', () => res.destroy());
        }, delayMs);
      });
    });
  server = make();
  receiver.port = await listen(server, port);
  receiver.url = `http://127.0.0.1:${receiver.port}${path}`;
  return receiver;
}
