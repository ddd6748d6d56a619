// The floor under the Upstash row: a QStash stand-in kept in memory, for the same @upstash/workflow
// app the runner serves. It answers what the SDK calls for sequential context.run steps (POST
// /v2/batch for the trigger and each step's result, DELETE /v2/workflows/runs/:id at the end),
// keeps nothing durable, and delivers a run's next message the moment the delivery it was published
// during is answered (the runner's order: publish-hold.ts), with the headers and body the runner
// sends and its signature (signature.ts), so the SDK does the same work (verify, decode, replay,
// publish, answer). What this costs is what no QStash-compatible runner can go below with this SDK.
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { signDelivery } from '../../dist/runner-core/qstash/signature.js';

/** The SDK's headers a delivery carries as they were published (the rest are QStash's instructions). */
const DELIVERED = new Set(['content-type', 'upstash-workflow-init', 'upstash-workflow-runid', 'upstash-workflow-url']);
const FORWARD = 'upstash-forward-';

/** What a published message's delivery carries: its `Upstash-Forward-*` headers unwrapped and the SDK's own. */
function deliveryHeaders(published) {
  const headers = {};
  for (const [name, value] of Object.entries(published)) {
    const lower = name.toLowerCase();
    if (lower.startsWith(FORWARD)) headers[lower.slice(FORWARD.length)] = value;
    else if (DELIVERED.has(lower)) headers[lower] = value;
  }
  return headers;
}

const readBody = (req) =>
  new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });

/**
 * Starts the stand-in on 127.0.0.1. `onEnd(runId)` is called when the SDK ends a run (its DELETE),
 * as the runner's harness sees a run complete at that commit.
 */
export async function startQstashStandIn({ token, signingKey, onEnd }) {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  /** runId -> { createdAt, list: [{messageId, body, callType}], queue: [message], delivering } */
  const runs = new Map();
  const failures = [];

  const deliver = async (run, message) => {
    run.delivering = true;
    const body = JSON.stringify(
      run.list.map((m) => ({ messageId: m.id, body: Buffer.from(m.body).toString('base64'), callType: 'step' })),
    );
    const now = Date.now();
    try {
      const answer = await request(message.destination, {
        dispatcher: agent,
        method: 'POST',
        headers: {
          ...message.headers,
          'upstash-message-id': message.id,
          'upstash-retried': '0',
          'upstash-workflow-createdat': String(run.createdAt),
          'user-agent': 'Upstash-QStash',
          'upstash-signature': signDelivery(signingKey, message.destination, body, now),
        },
        body,
      });
      const text = await answer.body.text();
      if (answer.statusCode < 200 || answer.statusCode >= 300) failures.push(`${answer.statusCode}: ${text}`);
    } catch (error) {
      failures.push(String(error));
    }
    run.delivering = false;
    const next = run.queue.shift();
    if (next) void deliver(run, next);
  };

  const publish = (entries) =>
    entries.map((entry) => {
      const headers = Object.fromEntries(Object.entries(entry.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      const runId = headers['upstash-workflow-runid'];
      const message = {
        id: `msg_${randomUUID().replaceAll('-', '')}`,
        destination: entry.destination,
        headers: deliveryHeaders(headers),
        body: entry.body ?? '',
      };
      let run = runs.get(runId);
      if (!run) {
        run = { createdAt: Date.now(), list: [], queue: [], delivering: false };
        runs.set(runId, run);
      }
      run.list.push(message);
      // Published during a delivery of the run: sent once that delivery is answered.
      if (run.delivering) run.queue.push(message);
      else void deliver(run, message);
      return { messageId: message.id, url: entry.destination };
    });

  const server = createServer(async (req, res) => {
    const answer = (status, value) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (req.headers.authorization !== `Bearer ${token}`) return answer(401, { error: 'unauthorized' });
    const body = await readBody(req);
    const url = new URL(req.url, 'http://standin');
    if (req.method === 'POST' && url.pathname === '/v2/batch') return answer(201, publish(JSON.parse(body)));
    const ended = /^\/v2\/workflows\/runs\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'DELETE' && ended) {
      runs.delete(ended[1]);
      answer(200, {});
      onEnd(ended[1]);
      return;
    }
    answer(404, { error: `not served by the stand-in: ${req.method} ${url.pathname}` });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    server,
    /** Deliveries the app did not answer 2xx (the bench fails the row if there are any). */
    failures,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await agent.close();
    },
  };
}
