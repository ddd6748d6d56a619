import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { startServer, type Endpoint } from '../helpers/endpoint.js';

/**
 * A reverse proxy on 127.0.0.1 (port 0) in front of `target`, adding `headers` to every request as
 * nginx's `proxy_set_header` would: for servers that learn their own URL from a proxy (adapter-node
 * takes the scheme from PROTOCOL_HEADER, else says https). The app's public origin is the proxy's.
 */
export async function forwardingProxy(target: string, headers: Record<string, string>): Promise<Endpoint> {
  return startServer((req: IncomingMessage, res: ServerResponse) => {
    const upstream = httpRequest(
      target + req.url,
      { method: req.method, headers: { ...req.headers, ...headers } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
}
