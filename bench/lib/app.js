// The app under test: `serve()` routes from dist on one node:http server at 127.0.0.1, with byte counters.
import { createServer } from 'node:http';
import { serve } from '../../dist/serve/adapters/node.js';
import { countBytes } from './byte-counter.js';

/**
 * routes: { '/path': { workflow, options } }. Every route shares `token` and `runnerUrl`;
 * `trace(name)` hears when a request arrives, its body is read and its response is finished.
 * Returns { origin, urlOf(path), counter, close() }.
 */
export async function startApp({ routes, token, runnerUrl = 'http://127.0.0.1:9', backlog = 511, trace = () => {} }) {
  const handlers = new Map();
  const server = createServer();
  // Drive requests may be held open for the whole hold phase of the RSS test.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  const counter = countBytes(server);
  server.on('request', (req, res) => {
    const handler = handlers.get((req.url ?? '/').split('?')[0]);
    if (!handler) {
      res.writeHead(404).end();
      return;
    }
    counter.track(req, res);
    trace('app: request arrives');
    req.once('end', () => trace('app: request body read'));
    res.once('finish', () => trace('app: response finished'));
    handler(req, res).catch((error) => {
      console.error('[bench app] handler failed:', error);
      res.destroy();
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', backlog }, resolve);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  // Told its public URL, as a deployed app is: outside development a route never takes it from Host.
  for (const [path, { workflow, options }] of Object.entries(routes)) {
    handlers.set(path, serve(workflow, { token, runnerUrl, baseUrl: origin, ...options }));
  }
  return {
    origin,
    urlOf: (path) => origin + path,
    counter,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
