import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedFromEnv } from '../helpers/seeded-random.js';
import { assertBuiltCli } from '../runner-core/wf-start-process.js';
import { tempFolder } from '../chaos/harness.js';
import { runFuzz } from './fuzz-loop.js';
import {
  expectAlive,
  expectNo5xx,
  expectSlowBodyAnswered,
  offerEndlessBodies,
  watchMemory,
  restartableRunner,
  type ProcessUnderTest,
} from './server-under-test.js';

/**
 * The runner's HTTP API (`wf start` as a child process, SQLite) under malformed requests: named
 * cases that broke it before, then thousands of seeded ones (WF_FUZZ_SEED replays them), slow
 * bodies and bodies that never end. No crash, no 5xx, bounded memory, and /healthz answers after.
 */

const seed = seedFromEnv();
const TOKEN = 'wf_fuzz_runner_token_0123456789';
const CASES = 3_000;
let folder: ReturnType<typeof tempFolder>;

const runners = restartableRunner(() => folder.dir, TOKEN);
const runner = (): Promise<ProcessUnderTest> => runners.current();

beforeAll(() => {
  assertBuiltCli();
  folder = tempFolder('wfkit-fuzz-runner-');
});

afterAll(async () => {
  await runners.kill();
  folder?.remove();
});

const auth = `Authorization: Bearer ${TOKEN}\r\n`;
const NAMED: [string, string][] = [
  ['a target URL cannot hold: GET //[', 'GET //[ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'],
  [
    'a malformed %-escape in an event id: POST /v1/events/%ZZ',
    `POST /v1/events/%ZZ HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Length: 0\r\nConnection: close\r\n\r\n`,
  ],
  [
    'JSON nested 50,000 levels deep',
    `POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n${'['.repeat(50_000)}${']'.repeat(50_000)}`,
  ],
  [
    'an absolute-form target',
    'GET http://evil.example/v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
  ],
  ['Host: [', 'GET /v1/runs HTTP/1.1\r\nHost: [\r\nConnection: close\r\n\r\n'],
  ['a NUL in the target', 'GET /v1/runs/\0 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'],
  [
    'a huge declared Content-Length',
    `POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Length: 99999999999\r\nConnection: close\r\n\r\n{}`,
  ],
  [
    'invalid UTF-8 in a start body',
    `POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Length: 12\r\nConnection: close\r\n\r\n{"url":"\xff\xfe"}`,
  ],
  [
    'an odd event id: a lone %',
    `POST /v1/events/% HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Length: 0\r\nConnection: close\r\n\r\n`,
  ],
  ['an odd run id: %E2%82', 'GET /v1/runs/%E2%82 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'],
];

describe(`fuzz: the runner API (seed ${seed}, WF_FUZZ_SEED to replay)`, () => {
  it.each(NAMED)('answers %s below 500 and stays up', async (_name, raw) => {
    await expectNo5xx(await runner(), raw);
  });

  it('answers a chunked body over the 1 MiB cap below 500 and stays up', async () => {
    const piece = `10000\r\n${'a'.repeat(0x10000)}\r\n`;
    await expectNo5xx(
      await runner(),
      `POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${piece.repeat(40)}0\r\n\r\n`,
    );
  });

  it(`answers ${CASES} seeded malformed requests without a 5xx, a crash, or unbounded memory`, async () => {
    const server = await runner();
    const memory = watchMemory(server);
    const paths = [
      '/v1/runs',
      '/v1/runs/wfr_01M85AXESBGS0XX31E4636HYM0',
      '/v1/runs/wfr_01M85AXESBGS0XX31E4636HYM0/steps',
      '/v1/runs/x/cancel',
      '/v1/runs/x/rerun',
      '/v1/events',
      '/v1/events/order-1',
      '/healthz',
      '/metrics',
      '/',
      '/runs/x',
      '/v1/session',
    ];
    let current = server;
    const crashOutput: string[] = [];
    const report = await runFuzz({
      seed,
      count: CASES,
      maxMs: 100_000,
      concurrency: 8,
      target: { paths, token: TOKEN, signedLooking: false },
      server: () => current,
      restart: async () => {
        crashOutput.push(current.output().slice(-800));
        current = await runner();
      },
    });
    console.log(
      `fuzz runner: ${JSON.stringify({ seed, sent: report.sent, crashes: report.crashes.length, tally: report.tally, memory: memory.summary() })}`,
    );
    // Crashes (with the cases in flight each time) and 5xx answers (each with its bytes) in one report.
    expect(
      { crashes: report.crashes, serverErrors: report.serverErrors },
      `what the runner printed as it died:\n${crashOutput.join('\n---\n')}`,
    ).toEqual({ crashes: [], serverErrors: [] });
    await expectAlive(current, `${report.sent} fuzz cases`);
    expect(report.sent, 'thousands of cases were sent within the time bound').toBeGreaterThanOrEqual(1_000);
    memory.assertBounded(`${report.sent} fuzz cases`);
  }, 150_000);

  it('answers slow bodies (a byte per 100 ms) below 500', async () => {
    const server = await runner();
    await Promise.all([
      expectSlowBodyAnswered(server, `POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}`, '{"url":"x","body":1}'),
      expectSlowBodyAnswered(server, `POST /v1/events/slow HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}`, '{"data":[1,2,3]}'),
      expectSlowBodyAnswered(server, 'POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n', '{"unauthorized":1}'),
    ]);
    await expectAlive(server, 'slow bodies');
  });

  it('keeps memory bounded while bodies that never end are offered, and answers /healthz after', async () => {
    const server = await runner();
    const memory = watchMemory(server);
    const offered = await Promise.all([
      offerEndlessBodies(server, `POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}`, 3, 4_000),
      offerEndlessBodies(server, `POST /v1/events/endless HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}`, 3, 4_000),
    ]);
    console.log(`fuzz runner endless bodies: ${JSON.stringify({ offered, memory: memory.summary() })}`);
    expect(offered.flatMap((o) => o.statuses).filter((s) => s >= 500)).toEqual([]);
    await expectAlive(server, 'endless bodies');
    memory.assertBounded('endless bodies');
    const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
    expect(health.status).toBe(200);
  }, 60_000);
});
