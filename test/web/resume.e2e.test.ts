import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import { buildWeb } from '../../web/build.js';
import { Counter, startApp, startTestRunner, waitForFinish, type TestApp, type TestRunner } from '../helpers/runner.js';
import { screenshot, waitForText } from './browser.js';
import { usePages } from './pages.js';

/** The web dashboard's Resume button and bulk action, in real headless Chromium against a real runner and app. */

let web: string;
let runner: TestRunner;
let app: TestApp;
let client: Client;
const state = { broken: true };
const counter = new Counter();

const { open, page } = usePages(() => runner.url);

beforeAll(async () => {
  web = mkdtempSync(join(tmpdir(), 'wfkit-web-build-'));
  await buildWeb(web);
  runner = await startTestRunner({ api: { dashboardDir: web } });
  app = await startApp(
    async (context) => {
      await context.run('reserve', () => counter.hit('reserve'));
      await context.run('charge', () => {
        counter.hit('charge');
        if (state.broken) throw new Error('payment provider down');
      });
      return context.run('ship', () => counter.hit('ship'));
    },
    { token: runner.token, runnerUrl: runner.url },
  );
  client = new Client({ runnerUrl: runner.url, token: runner.token });
});

afterAll(async () => {
  await app?.close();
  await runner?.close();
  rmSync(web, { recursive: true, force: true });
});

async function failedRun(): Promise<string> {
  const { workflowRunId } = await client.trigger({ url: app.url, retries: 0 });
  expect((await waitForFinish(runner.runner, workflowRunId)).run.status).toBe('failed');
  return workflowRunId;
}

describe('web dashboard: resume', () => {
  it('resumes a failed run from its failed step with the Resume button', async () => {
    state.broken = true;
    const id = await failedRun();
    await open(`/runs/${id}`);
    await waitForText(page().getByTestId('run-status'), 'failed');
    await screenshot(page(), 'resume-failed-run');
    state.broken = false;
    const before = counter.of('reserve');
    await page().getByRole('button', { name: 'Resume' }).click();
    await waitForText(page().getByTestId('run-status'), 'completed');
    await waitForText(page().getByTestId('steps'), 'ship');
    expect(counter.of('reserve')).toBe(before); // the succeeded step did not run again
    expect(await page().getByRole('button', { name: 'Resume' }).count()).toBe(0);
    await screenshot(page(), 'resume-completed-run');
  });

  it('resumes every failed run from the runs list after a count and a confirmation', async () => {
    state.broken = true;
    const ids = [await failedRun(), await failedRun()];
    await open('/runs?status=failed');
    await waitForText(page().getByTestId('bulk-actions'), 'Resume all failed runs');
    state.broken = false;
    await page().getByRole('button', { name: 'Resume all failed runs…' }).click();
    const dialog = page().getByTestId('bulk-confirm');
    await waitForText(dialog, 'Resume 2 failed runs?');
    await screenshot(page(), 'bulk-resume-confirm');
    await dialog.getByRole('button', { name: 'Yes, resume 2' }).click();
    await waitForText(page().getByTestId('bulk-result'), 'Resume: 2 of 2 done.');
    for (const id of ids) expect((await waitForFinish(runner.runner, id)).run.status).toBe('completed');
    await screenshot(page(), 'bulk-resume-done');
  });
});
