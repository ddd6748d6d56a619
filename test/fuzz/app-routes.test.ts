import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuiltAdapter, spawnApp, type AppProcess } from '../helpers/app-process.js';
import { seedFromEnv } from '../helpers/seeded-random.js';
import { assertBuiltCli, spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import { tempFolder } from '../chaos/harness.js';
import { runFuzz } from './fuzz-loop.js';
import {
  expectAlive,
  expectNo5xx,
  expectSlowBodyAnswered,
  offerEndlessBodies,
  watchMemory,
  type ProcessUnderTest,
} from './server-under-test.js';

/**
 * A real app's workflow route under malformed requests, on `wfkit/node` and on Hono through
 * `@hono/node-server`, each an app process with a real runner (`wf start`) behind it: named cases
 * that broke it before, thousands of seeded ones (unsigned starts and signed-looking drives with bad
 * signatures), slow bodies and bodies that never end. No crash, no 5xx, bounded memory, and a
 * normal start still answers afterwards.
 */

const seed = seedFromEnv();
const TOKEN = 'wf_fuzz_app_token_0123456789';
const CASES = 2_000;
let folder: ReturnType<typeof tempFolder>;
let runner: WfStartProcess | undefined;
const apps: AppProcess[] = [];

beforeAll(async () => {
  assertBuiltCli();
  assertBuiltAdapter();
  folder = tempFolder('wfkit-fuzz-app-');
  runner = await spawnWfStart(
    ['--database', join(folder.dir, 'runner.db'), '--log-format', 'json'],
    { WF_TOKENS: TOKEN, WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*' },
    folder.dir,
  );
});

afterAll(async () => {
  await Promise.all(apps.map((app) => app.kill()));
  if (runner?.running()) runner.child.kill('SIGKILL');
  await runner?.exited;
  folder?.remove();
});

const piece = `10000\r\n${'a'.repeat(0x10000)}\r\n`;
const signed = `wf-signature: v1,${Buffer.from('x'.repeat(32)).toString('base64')}\r\nwf-signature-id: msg_1\r\nwf-signature-timestamp: ${Math.floor(Date.now() / 1000)}\r\nwf-deadline: ${Date.now() + 600_000}\r\n`;
const NAMED: [string, string][] = [
  [
    'a chunked start body over the 1 MiB cap',
    `POST /workflow HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n${piece.repeat(24)}0\r\n\r\n`,
  ],
  [
    'a chunked signed-looking body over the 8 MiB drive cap',
    `POST /workflow HTTP/1.1\r\nHost: 127.0.0.1\r\n${signed}Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n${piece.repeat(144)}0\r\n\r\n`,
  ],
  ['Host: [', 'POST /workflow HTTP/1.1\r\nHost: [\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}'],
  [
    'a target URL cannot hold: POST //[',
    'POST //[ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
  ],
  [
    'an absolute-form target',
    'POST http://evil.example/workflow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
  ],
  [
    'a start body nested 50,000 levels deep',
    `POST /workflow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n${'['.repeat(50_000)}${']'.repeat(50_000)}`,
  ],
  [
    'a signed-looking drive nested 50,000 levels deep',
    `POST /workflow HTTP/1.1\r\nHost: 127.0.0.1\r\n${signed}Content-Length: 100000\r\nConnection: close\r\n\r\n${'['.repeat(50_000)}${']'.repeat(50_000)}`,
  ],
  [
    'invalid UTF-8 in a start body',
    'POST /workflow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 12\r\nConnection: close\r\n\r\n{"text":"\xff\xfe"}',
  ],
  [
    'a huge declared Content-Length',
    'POST /workflow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999\r\nConnection: close\r\n\r\n{}',
  ],
  [
    'a %ZZ in the target',
    'POST /workflow/%ZZ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
  ],
];

describe.each(['node', 'hono'] as const)(
  `fuzz: the workflow route on %s (seed ${seed}, WF_FUZZ_SEED to replay)`,
  (framework) => {
    let current: AppProcess | undefined;
    const crashOutput: string[] = [];
    const underTest = (app: AppProcess): ProcessUnderTest => ({
      pid: app.pid,
      port: app.port,
      running: app.running,
      output: app.output,
    });
    /** The app, started again when an earlier case killed it (so one crash does not hide the next). */
    const app = async (): Promise<ProcessUnderTest> => {
      if (current?.running()) return underTest(current);
      if (current) crashOutput.push(current.output().slice(-800));
      current = await spawnApp({ framework, token: TOKEN, runnerUrl: runner!.url });
      apps.push(current);
      return underTest(current);
    };

    it.each(NAMED)('answers %s below 500 and stays up', async (_name, raw) => {
      await expectNo5xx(await app(), raw);
    });

    it(`answers ${CASES} seeded malformed requests without a 5xx, a crash, or unbounded memory`, async () => {
      let server = await app();
      const memory = watchMemory(server);
      const report = await runFuzz({
        seed,
        count: CASES,
        maxMs: 90_000,
        concurrency: 8,
        target: { paths: ['/workflow', '/workflow?x=1', '/other', '/'], token: TOKEN, signedLooking: true },
        server: () => server,
        restart: async () => (server = await app()),
      });
      console.log(
        `fuzz ${framework} app: ${JSON.stringify({ seed, sent: report.sent, crashes: report.crashes.length, tally: report.tally, memory: memory.summary() })}`,
      );
      // Crashes (with the cases in flight each time) and 5xx answers (each with its bytes) in one report.
      expect(
        { crashes: report.crashes, serverErrors: report.serverErrors },
        `what the app printed as it died:\n${crashOutput.join('\n---\n')}`,
      ).toEqual({ crashes: [], serverErrors: [] });
      await expectAlive(server, `${report.sent} fuzz cases`);
      expect(report.sent, 'thousands of cases were sent within the time bound').toBeGreaterThanOrEqual(1_000);
      memory.assertBounded(`${report.sent} fuzz cases`);
    }, 150_000);

    it('answers slow bodies (a byte per 100 ms) below 500', async () => {
      const server = await app();
      await Promise.all([
        expectSlowBodyAnswered(server, 'POST /workflow HTTP/1.1\r\nHost: 127.0.0.1\r\n', '{"text":"slow"}'),
        expectSlowBodyAnswered(
          server,
          `POST /workflow HTTP/1.1\r\nHost: 127.0.0.1\r\n${signed}`,
          '{"v":1,"runId":"x"}',
        ),
      ]);
      await expectAlive(server, 'slow bodies');
    });

    it('keeps memory bounded while bodies that never end are offered, then answers a normal start', async () => {
      const server = await app();
      const memory = watchMemory(server);
      const offered = await Promise.all([
        offerEndlessBodies(server, 'POST /workflow HTTP/1.1\r\nHost: 127.0.0.1\r\n', 3, 4_000),
        offerEndlessBodies(server, `POST /workflow HTTP/1.1\r\nHost: 127.0.0.1\r\n${signed}`, 3, 4_000),
      ]);
      console.log(`fuzz ${framework} app endless bodies: ${JSON.stringify({ offered, memory: memory.summary() })}`);
      expect(offered.flatMap((o) => o.statuses).filter((s) => s >= 500)).toEqual([]);
      await expectAlive(server, 'endless bodies');
      memory.assertBounded('endless bodies');
      const start = await fetch(`http://127.0.0.1:${server.port}/workflow`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"stepMs":[1]}',
      });
      expect(start.status).toBe(200);
      expect(((await start.json()) as { workflowRunId: string }).workflowRunId).toMatch(/^wfr_/);
    }, 60_000);
  },
);
