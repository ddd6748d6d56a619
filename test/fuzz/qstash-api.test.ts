import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { seedFromEnv } from '../helpers/seeded-random.js';
import { closeServer, listen } from '../helpers/runner.js';
import { assertBuiltCli } from '../runner-core/wf-start-process.js';
import { tempFolder } from '../chaos/harness.js';
import { runFuzz } from './fuzz-loop.js';
import { qstashBody, qstashPaths, qstashRequest, upstashHeaders } from './qstash-cases.js';
import {
  expectAlive,
  expectNo5xx,
  watchMemory,
  restartableRunner,
  QSTASH_BODY_HEADROOM_BYTES,
  RSS_HEADROOM_BYTES,
  type ProcessUnderTest,
} from './server-under-test.js';

/**
 * The runner's QStash API (`/v2`: publish, batch, workflow runs, wait/notify, events), its bulk
 * route and its schedule routes under hostile requests, mostly with the valid token (so the
 * requests reach the engine, not the 401): odd `Upstash-*` headers, paths and bodies shaped like
 * theirs. What gets published goes to a loopback sink, so deliveries run too. No 5xx, no crash (an
 * unhandled rejection ends the process), bounded memory, and a plain publish still delivers after.
 */

const seed = seedFromEnv();
const TOKEN = 'wf_fuzz_qstash_token_0123456789';
const CASES = 2_000;
let folder: ReturnType<typeof tempFolder>;
let sink: Server;
let sinkUrl = '';
let delivered = 0;
const deliveredIds = new Set<string>();

const runners = restartableRunner(() => folder.dir, TOKEN);
const runner = (): Promise<ProcessUnderTest> => runners.current();

beforeAll(async () => {
  assertBuiltCli();
  folder = tempFolder('wfkit-fuzz-qstash-');
  // Where published messages go: answers 200 at once, reads at most 1 MiB of a body.
  sink = createServer((req, res) => {
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > 1024 * 1024) req.destroy();
    });
    req.on('end', () => {
      delivered++;
      deliveredIds.add(String(req.headers['upstash-message-id']));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  sinkUrl = `http://127.0.0.1:${await listen(sink)}/sink`;
});

afterAll(async () => {
  await runners.kill();
  if (sink) await closeServer(sink);
  folder?.remove();
});

const auth = `Authorization: Bearer ${TOKEN}\r\n`;
const request = (method: string, path: string, headers: string, body = ''): string =>
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}${headers}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;

describe(`fuzz: the QStash API, bulk and schedule routes (seed ${seed}, WF_FUZZ_SEED to replay)`, () => {
  it('answers named hostile requests below 500 and stays up', async () => {
    const server = await runner();
    const named = [
      request(
        'POST',
        `/v2/publish/${sinkUrl}`,
        'Upstash-Workflow-RunId: wfr_none\r\nUpstash-Workflow-CallType: toCallback\r\nUpstash-Callback: http://evil.example/\r\n',
        '{}',
      ),
      request('POST', '/v2/publish/http%3A%2F%2F127.0.0.1%3A1%2F%ZZ', '', '{}'),
      request('POST', '/v2/batch', '', JSON.stringify(Array.from({ length: 1001 }, () => ({ destination: sinkUrl })))),
      request('POST', '/v2/batch', '', '['.repeat(50_000)),
      request('POST', '/v2/wait/order-1', '', '{"url":1,"timeout":"1e400"}'),
      request('POST', '/v2/notify/%ZZ', '', ''),
      request('DELETE', '/v2/workflows/runs/wfr_none?cancel=true', '', '{'),
      request('GET', '/v2/workflows/events?count=-1&cursor=%ZZ', ''),
      request('POST', '/v1/runs/bulk', '', '{"action":"cancel","filter":{"status":"x"}}'),
      request('POST', '/v1/schedules', '', '{"cron":"* * * * * * *","url":"http://127.0.0.1:1/x"}'),
      request('DELETE', '/v1/schedules/%ZZ', ''),
    ];
    for (const raw of named) await expectNo5xx(server, raw);
  });

  it(`answers ${CASES} seeded hostile requests without a 5xx, a crash, or unbounded memory, and still delivers`, async () => {
    const server = await runner();
    const memory = watchMemory(server, RSS_HEADROOM_BYTES + QSTASH_BODY_HEADROOM_BYTES);
    let current = server;
    const crashOutput: string[] = [];
    const report = await runFuzz({
      seed,
      count: CASES,
      maxMs: 90_000,
      concurrency: 6,
      target: {
        paths: qstashPaths(sinkUrl),
        token: TOKEN,
        signedLooking: false,
        tokenChance: 0.9,
        headers: (random) => upstashHeaders(random, sinkUrl),
        bodies: (random) => qstashBody(random, sinkUrl),
        // Half the cases well-formed, so most reach the engine rather than the parser or the 401.
        wellFormed: (random) => qstashRequest(random, sinkUrl, TOKEN),
        fetchEvery: 2,
      },
      server: () => current,
      restart: async () => {
        crashOutput.push(current.output().slice(-800));
        current = await runner();
      },
    });
    console.log(
      `fuzz qstash: ${JSON.stringify({ seed, sent: report.sent, crashes: report.crashes.length, delivered, tally: report.tally, memory: memory.summary() })}`,
    );
    expect(
      { crashes: report.crashes, serverErrors: report.serverErrors },
      `what the runner printed as it died:\n${crashOutput.join('\n---\n')}`,
    ).toEqual({ crashes: [], serverErrors: [] });
    await expectAlive(current, `${report.sent} fuzz cases`);
    expect(current.output()).not.toMatch(/unhandled ?rejection/i);
    expect(report.sent).toBeGreaterThanOrEqual(1_000);
    memory.assertBounded(`${report.sent} fuzz cases`);

    // A plain publish is still taken and delivered.
    const response = await fetch(`http://127.0.0.1:${current.port}/v2/publish/${sinkUrl}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: 'after the fuzz',
    });
    expect(response.status).toBe(201);
    const { messageId } = (await response.json()) as { messageId: string };
    await vi.waitFor(() => expect(deliveredIds.has(messageId)).toBe(true), { timeout: 30_000, interval: 50 });
  }, 180_000);
});
