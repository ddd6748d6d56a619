import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { assertBuiltCli, spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import { describeUpstashFeatures, type UpstashHarness } from './scenarios.js';
import { startUpstashApp, type UpstashApp } from './upstash-app.js';

/**
 * The Upstash proof against `wf start` as production runs it: the built CLI in a child process, a
 * SQLite file, a strong token, the signing keys in its environment, and allowed origins limited to
 * the loopback apps. The Upstash app (Hono on Node) gets the same values under Upstash's own names.
 */

const TOKEN = `wf_${randomBytes(32).toString('hex')}`;
// Upstash's keys look like `sig_…`; any secret string works, the runner and the app only have to agree.
const CURRENT_KEY = `sig_${randomBytes(24).toString('base64url')}`;
const NEXT_KEY = `sig_${randomBytes(24).toString('base64url')}`;

let dir = '';
let runner: WfStartProcess | undefined;
const apps: UpstashApp[] = [];
let harness: UpstashHarness;

beforeAll(async () => {
  assertBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'wfkit-upstash-start-'));
  runner = await spawnWfStart(['--database', join(dir, 'runner.db')], {
    WF_TOKENS: TOKEN,
    WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*',
    QSTASH_CURRENT_SIGNING_KEY: CURRENT_KEY,
    QSTASH_NEXT_SIGNING_KEY: NEXT_KEY,
  });
  const base = { QSTASH_URL: runner.url, QSTASH_TOKEN: TOKEN };
  const app = await startUpstashApp({ ...base, QSTASH_CURRENT_SIGNING_KEY: CURRENT_KEY, QSTASH_NEXT_SIGNING_KEY: NEXT_KEY });
  const openApp = await startUpstashApp(base);
  apps.push(app, openApp);
  harness = { runnerUrl: runner.url, token: TOKEN, app, openApp };
}, 60_000);

afterAll(async () => {
  await Promise.all(apps.splice(0).map((app) => app.stop()));
  if (runner?.running()) runner.child.kill('SIGTERM');
  await runner?.exited;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describeUpstashFeatures('wf start (SQLite)', () => harness);
