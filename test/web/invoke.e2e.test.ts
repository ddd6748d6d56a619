import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../serve/core/handler.js';
import { buildWeb } from '../../web/build.js';
import {
  startApp,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';
import { screenshot, waitForText } from './browser.js';
import { usePages } from './pages.js';

/**
 * Child workflows in the web dashboard (real Chromium, real runner, real app): the parent's invoke
 * step links to the child run, and the child's run page links back to that step.
 */

let web: string;
let runner: TestRunner;
let app: TestApp;
let parentId: string;
let childId: string;

const workflow: Workflow<{ child?: string }> = async (context) => {
  const name = context.requestPayload?.child;
  if (name !== undefined) return context.run('greet', () => `hello ${name}`);
  const { body } = await context.invoke<string>('greet-child', { url: '/workflow', body: { child: 'ana' } });
  return context.run('after', () => body);
};

const { open } = usePages(() => runner.url);

beforeAll(async () => {
  web = mkdtempSync(join(tmpdir(), 'wfkit-web-build-'));
  await buildWeb(web);
  runner = await startTestRunner({ api: { dashboardDir: web } });
  app = await startApp(workflow, { token: runner.token, runnerUrl: runner.url });
  parentId = await startThroughApp(app.url);
  const { steps } = await waitForFinish(runner.runner, parentId);
  childId = (await runner.store.listRuns({})).runs.find((r) => r.id !== parentId)!.id;
  expect(steps[0]).toMatchObject({ kind: 'invoke', eventId: `wf-child:${childId}` });
});

afterAll(async () => {
  await app?.close();
  await runner?.close();
  rmSync(web, { recursive: true, force: true });
});

describe('web dashboard: child workflows', () => {
  it("links the parent's invoke step to the child run, and the child run back to its parent", async () => {
    const page = await open(`/runs/${parentId}/steps/0`);
    await waitForText(page.getByTestId('step-status'), 'succeeded');
    await waitForText(page.getByTestId('child-run-link'), childId);
    await screenshot(page, 'invoke-parent-step-desktop');

    await page.getByTestId('child-run-link').click();
    await page.waitForURL(`**/runs/${childId}`);
    await waitForText(page.getByTestId('run-id'), childId);
    await waitForText(page.getByTestId('parent-run-link'), `${parentId} › step #0`);
    expect(await page.getByTestId('run-output').innerText()).toContain('hello ana');
    await screenshot(page, 'invoke-child-run-desktop');

    await page.getByTestId('parent-run-link').click();
    await page.waitForURL(`**/runs/${parentId}/steps/0`);
    await waitForText(page.getByTestId('step-status'), 'succeeded');
  });
});
