import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as UpstashClient } from '@upstash/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import { buildWeb } from '../../web/build.js';
import { startTestRunner, waitForFinish, type TestRunner } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from '../qstash/upstash-app.js';
import { screenshot, waitForText } from './browser.js';
import { usePages } from './pages.js';

/**
 * Upstash-protocol runs in the web dashboard, in real headless Chromium against a real runner and a
 * real @upstash/workflow app: a protocol badge in the list and on the run page, no Resume or Rerun
 * (the runner refuses them, 409 UPSTASH_RUN) while Cancel stays, the bulk bar not counting them for
 * resume, and each step's page listing the deliveries that ran it. Screenshots go to test/artifacts/.
 */

let web: string;
let runner: TestRunner;
let app: UpstashApp;
let completedId: string;
let failedId: string;
let flakyLeft = 1;

const { open, page } = usePages(() => runner.url);

beforeAll(async () => {
  web = mkdtempSync(join(tmpdir(), 'wfkit-web-build-'));
  await buildWeb(web);
  runner = await startTestRunner({ api: { dashboardDir: web } });
  app = await startUpstashApp(runner, {
    checkout: {
      route: async (context) => {
        await context.run('reserve', async () => 'reserved');
        await context.run('charge', async () => {
          if (flakyLeft-- > 0) throw new Error('card network down');
          return 'charged';
        });
      },
    },
    broken: {
      route: async (context) => {
        await context.run('explode', async () => {
          throw new Error('always broken');
        });
      },
    },
  });
  const env = upstashEnv(runner);
  const client = new UpstashClient({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
  completedId = (await client.trigger({ url: `${app.url}/checkout`, body: {}, retries: 2, retryDelay: '20' }))
    .workflowRunId;
  failedId = (await client.trigger({ url: `${app.url}/broken`, body: {}, retries: 0 })).workflowRunId;
  expect((await waitForFinish(runner.runner, completedId, 20_000)).run.status).toBe('completed');
  expect((await waitForFinish(runner.runner, failedId, 20_000)).run.status).toBe('failed');
});

afterAll(async () => {
  await app?.close();
  await runner?.close();
  rmSync(web, { recursive: true, force: true });
});

describe('web dashboard: Upstash-protocol runs', () => {
  it('badges them in the run list', async () => {
    await open('/');
    const row = page().locator(`[data-testid="run-row"][data-run-id="${failedId}"]`);
    await waitForText(row.getByTestId('protocol-badge'), 'Upstash');
    await waitForText(
      page().locator(`[data-testid="run-row"][data-run-id="${completedId}"]`).getByTestId('protocol-badge'),
      'Upstash',
    );
    await screenshot(page(), 'upstash-run-list');
  });

  it('offers neither Resume nor Rerun on a failed Upstash run, and says why', async () => {
    await open(`/runs/${failedId}`);
    await waitForText(page().getByTestId('run-status'), 'failed');
    await waitForText(page().locator('.run-title').getByTestId('protocol-badge'), 'Upstash');
    await waitForText(page().getByTestId('protocol-fact'), 'no resume or rerun');
    expect(await page().getByRole('button', { name: 'Resume' }).count()).toBe(0);
    expect(await page().getByRole('button', { name: 'Rerun' }).count()).toBe(0);
    await screenshot(page(), 'upstash-failed-run');
  });

  it("lists a step's deliveries on its page: the failed try and the one that produced it", async () => {
    const steps = await runner.store.listSteps(completedId);
    const charge = steps.find((s) => s.name === 'charge')!;
    await open(`/runs/${completedId}/steps/${charge.index}`);
    await waitForText(page().getByTestId('step-detail'), 'charge');
    const items = page().getByTestId('step-detail').getByTestId('attempt-item');
    await expect.poll(() => items.count(), { timeout: 10_000 }).toBe(2);
    const texts = await items.allTextContents();
    expect(texts.join('\n')).toContain('500');
    expect(texts.join('\n')).not.toContain('No delivery ran this step');
    await screenshot(page(), 'upstash-step-deliveries');
  });

  it("names the step a delivery ran on the delivery's page", async () => {
    const attempts = await runner.store.listAttempts(completedId);
    const failedTry = attempts.find((a) => a.responseStatus === 500)!;
    const charge = (await runner.store.listSteps(completedId)).find((s) => s.name === 'charge')!;
    await open(`/runs/${completedId}/attempts/${failedTry.seq}`);
    const detail = page().getByTestId('attempt-detail');
    await waitForText(detail.locator('.step-links'), `#${charge.index} charge`);
  });

  it('the bulk resume leaves Upstash runs out of its count', async () => {
    const client = new Client({ runnerUrl: runner.url, token: runner.token });
    expect(await client.bulk({ action: 'resume', filter: { status: 'failed' }, dryRun: true })).toMatchObject({
      matched: 0,
    });
    expect(await client.bulk({ action: 'rerun', filter: {}, dryRun: true })).toMatchObject({ matched: 0 });
    // Cancel still applies to them (here: both finished, so matched but refused one by one).
    expect((await client.bulk({ action: 'cancel', filter: {}, dryRun: true })).matched).toBe(2);
  });
});
