// Baseline (a): one loopback HTTP round trip, undici keep-alive Agent -> node:http on 127.0.0.1.
import { createServer } from 'node:http';
import { Agent } from 'undici';
import { summarize } from './stats.js';
import { deadline } from './timebox.js';

const BODY = JSON.stringify({ hello: 'world', n: 1 });

export async function measureHttpRoundTrip({ n = 2000, warmup = 200, maxMs = 20_000 } = {}) {
  const server = createServer((req, res) => {
    let size = 0;
    req.on('data', (chunk) => (size += chunk.length));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"ok":true,"received":${size}}`);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const agent = new Agent({ connections: 1, keepAliveTimeout: 10_000, pipelining: 1 });
  const once = async () => {
    const res = await agent.request({
      origin,
      path: '/',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: BODY,
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`HTTP baseline: expected 200, got ${res.statusCode}`);
  };
  const samples = [];
  try {
    const time = deadline(maxMs);
    for (let i = 0; i < warmup && !time.passed(); i++) await once();
    for (let i = 0; i < n && !time.passed(); i++) {
      const t0 = performance.now();
      await once();
      samples.push(performance.now() - t0);
    }
  } finally {
    await agent.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  return { ...summarize(samples), samples };
}
