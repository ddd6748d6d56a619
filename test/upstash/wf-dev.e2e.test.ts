import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@upstash/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  interrupt,
  killAllCli,
  removeTempDirs,
  spawnCli,
  tempDir,
  untilOutput,
  type Cli,
} from '../cli/cli-process.js';
import { unusedPort } from '../helpers/runner.js';
import { launchBrowser, screenshot, waitForText, watchPage } from '../web/browser.js';
import { waitForRunView } from './runner-api.js';
import { describeUpstashFidelity } from './fidelity-scenarios.js';
import { describeUpstashWebhooks } from './scenarios-webhooks.js';
import { describeUpstashFeatures, type UpstashHarness } from './scenarios.js';
import { startUpstashApp, upstashAppAt, type UpstashApp } from './upstash-app.js';

/**
 * The Upstash proof against `wf dev`: in a folder whose package.json depends on @upstash/workflow,
 * `wf dev -- node hono-app.ts` recognizes an Upstash app, starts the runner, prints the four values
 * and starts the app with them: the app gets QSTASH_URL, QSTASH_TOKEN, the signing keys and
 * UPSTASH_WORKFLOW_URL from `wf dev` alone. The web dashboard then shows one of its runs step by step.
 */

const APP = join(import.meta.dirname, 'fixtures/hono-app.ts');

let dev: Cli;
let port = 0;
let harness: UpstashHarness;
const printed: Record<string, string> = {};
const apps: UpstashApp[] = [];

/** The parent's environment without a runner, token, key or app port of its own. */
function devEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { NO_COLOR: '1' };
  for (const [key, value] of Object.entries(process.env))
    if (!/^(QSTASH_|UPSTASH_|WF_|SERVICE_|VITEST|NODE_OPTIONS$|PORT$)/.test(key)) env[key] = value;
  return env;
}

beforeAll(async () => {
  assertBuilt();
  const dir = tempDir('wf-dev-upstash-');
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: 'upstash-app',
      private: true,
      type: 'module',
      dependencies: { '@upstash/workflow': '^1.3.3', hono: '^4' },
    }),
  );
  port = await unusedPort();
  dev = spawnCli(
    [
      'dev',
      '--no-tui',
      '--port',
      '0',
      '--app-port',
      String(port),
      '--route',
      '/workflows/two-steps',
      '--',
      process.execPath,
      APP,
    ],
    dir,
    devEnv(),
  );
  for (const name of [
    'QSTASH_URL',
    'QSTASH_TOKEN',
    'QSTASH_CURRENT_SIGNING_KEY',
    'QSTASH_NEXT_SIGNING_KEY',
    'UPSTASH_WORKFLOW_URL',
  ]) {
    printed[name] = (await untilOutput(dev, new RegExp(`^.*?\\b${name}=(\\S+)$`, 'm'), 30_000))[1]!;
  }
  await untilOutput(dev, /upstash app listening on http:\/\/127\.0\.0\.1:\d+/, 30_000);
  // The app wf dev started: it announced itself at UPSTASH_WORKFLOW_URL (localhost:<app port>).
  const app = upstashAppAt(
    `http://127.0.0.1:${port}`,
    printed.UPSTASH_WORKFLOW_URL!,
    () => dev.stdout,
    async () => {},
  );
  // The same app without keys (Upstash's local mode), for the direct POST: started here with wf dev's URL and token.
  const openApp = await startUpstashApp({ QSTASH_URL: printed.QSTASH_URL!, QSTASH_TOKEN: printed.QSTASH_TOKEN! });
  apps.push(openApp);
  harness = { runnerUrl: printed.QSTASH_URL!, token: printed.QSTASH_TOKEN!, app, openApp };
}, 60_000);

afterAll(async () => {
  await Promise.all(apps.splice(0).map((app) => app.stop()));
  if (dev) await interrupt(dev);
  await killAllCli();
  removeTempDirs();
});

describe('wf dev: what it prints for an Upstash app', () => {
  it("the runner URL, a runner token, a pair of signing keys and the app's public URL", () => {
    expect(printed.QSTASH_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(printed.QSTASH_TOKEN!.length).toBeGreaterThan(8);
    expect(printed.QSTASH_CURRENT_SIGNING_KEY).not.toBe(printed.QSTASH_NEXT_SIGNING_KEY);
    expect(printed.UPSTASH_WORKFLOW_URL).toBe(`http://localhost:${port}`);
    expect(dev.stdout).toMatch(/an Upstash Workflow app: this runner serves the QStash API/);
    expect(dev.stdout).not.toMatch(/^wf dev: error/m);
  });
});

describeUpstashFeatures('wf dev', () => harness);
describeUpstashFidelity('wf dev', () => harness);
describeUpstashWebhooks('wf dev', () => harness);

describe('wf dev: the web dashboard shows an Upstash run step by step', () => {
  it('a parallel run, its steps by name and output (screenshot: test/artifacts/upstash-run.png)', async () => {
    const client = new Client({ baseUrl: harness.runnerUrl, token: harness.token });
    const { workflowRunId } = await client.trigger({ url: harness.app.workflowUrl('parallel'), body: { base: 100 } });
    expect((await waitForRunView(harness.runnerUrl, harness.token, workflowRunId)).run.status).toBe('completed');
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      const problems = watchPage(page);
      await page.goto(`${harness.runnerUrl}/runs/${workflowRunId}`);
      await waitForText(page.getByTestId('run-status'), 'completed');
      const body = page.locator('body');
      for (const text of ['plus-one', 'plus-two', 'plus-three', 'sum', '306']) await waitForText(body, text);
      // A step opens with its output: plus-two of base 100.
      await page.getByText('plus-two', { exact: true }).first().click();
      await waitForText(body, '102');
      await screenshot(page, 'upstash-run');
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
