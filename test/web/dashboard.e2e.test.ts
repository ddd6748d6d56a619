import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import { createApiServer } from '../../runner-core/api/server.js';
import { buildWeb } from '../../web/build.js';
import {
  closeServer,
  gate,
  listen,
  startApp,
  startTestRunner,
  startThroughApp,
  unusedPort,
  waitForFinish,
  waitForRun,
  type TestRunner,
} from '../helpers/runner.js';
import { screenshot, waitForText } from './browser.js';
import { usePages } from './pages.js';
import { JS_URL, XSS_TEXT, startApps, type Apps } from './workflows.js';

/**
 * The web dashboard in real headless Chromium, against a real runner and real apps on 127.0.0.1:
 * what a person sees and clicks. Screenshots go to test/artifacts/ (CI artifacts).
 * The dashboard is built from web/ into a temp folder first, so this tests the current sources.
 */

let web: string;
let runner: TestRunner;
let apps: Apps;
const ids: Record<string, string> = {};

const { open, page, browser } = usePages(() => runner.url);

beforeAll(async () => {
  web = mkdtempSync(join(tmpdir(), 'wfkit-web-build-'));
  await buildWeb(web);
  runner = await startTestRunner({ api: { dashboardDir: web } });
  apps = await startApps(runner);
  ids.twoStep = await startThroughApp(apps.twoStep.url, { text: 'hello' }, { 'x-customer': 'acme' });
  ids.failing = await startThroughApp(apps.failing.url, { order: 42 });
  ids.xss = await startThroughApp(apps.xss.url, { note: XSS_TEXT });
  ids.call = await startThroughApp(apps.call.url, {});
  ids.parallel = await startThroughApp(apps.parallel.url, {});
  for (const key of ['twoStep', 'failing', 'xss', 'call', 'parallel']) await waitForFinish(runner.runner, ids[key]!);
  ids.sleep = await startThroughApp(apps.sleep.url, {});
  ids.wait = await startThroughApp(apps.wait.url, {});
  await waitForRun(runner.runner, ids.sleep, (run) => run.status === 'sleeping');
  await waitForRun(runner.runner, ids.wait, (run) => run.status === 'waiting');
});

afterAll(async () => {
  apps?.release();
  await apps?.close();
  await runner?.close();
  rmSync(web, { recursive: true, force: true });
});

const row = (id: string) => page().locator(`[data-testid="run-row"][data-run-id="${id}"]`);

describe('web dashboard: runs, run, step', () => {
  it('lists runs with their status, opens a run from its deep link and shows the start headers and body', async () => {
    await open('/');
    await waitForText(page().getByTestId('stream'), 'live');
    await waitForText(row(ids.twoStep!), 'completed');
    await waitForText(row(ids.failing!), 'failed');
    await waitForText(row(ids.sleep!), 'sleeping');
    await waitForText(row(ids.wait!), 'waiting');
    // The footer: the database's size (GET /v1/store) and its retention (none in this runner).
    await waitForText(page().getByTestId('store-footer'), 'finished runs kept forever');
    expect(await page().getByTestId('store-footer').innerText()).toMatch(
      /^database \d[\d.]* (KB|MB) · finished runs kept forever$/,
    );
    await screenshot(page(), 'runs-desktop');

    await page().goto(`${runner.url}/runs/${ids.twoStep}`);
    await waitForText(page().getByTestId('run-status'), 'completed');
    expect(await page().getByTestId('run-id').innerText()).toBe(ids.twoStep);
    expect(await page().getByTestId('run-headers').innerText()).toMatch(/x-customer\s+acme/);
    expect(await page().getByTestId('run-body').innerText()).toContain('"text": "hello"');
    expect(await page().getByTestId('run-output').innerText()).toContain('"upper": "HELLO"');
    expect(await page().getByTestId('run-output').innerText()).toContain('Date(2025-01-02T03:04:05.000Z)');
    expect(await page().getByTestId('steps').innerText()).toMatch(/#0\s+initial-step[\s\S]*#1\s+second-step/);
    await screenshot(page(), 'run-desktop');

    await page().getByTestId('step-item').filter({ hasText: 'initial-step' }).click();
    await page().waitForURL(`**/runs/${ids.twoStep}/steps/0`);
    await waitForText(page().getByTestId('step-status'), 'succeeded');
    expect(await page().getByTestId('step-output').innerText()).toBe('"HELLO"');
    // One click on to the attempt that ran it: the drive request and the route's answer.
    await page().getByTestId('step-detail').getByTestId('attempt-item').first().click();
    await page().waitForURL(`**/runs/${ids.twoStep}/attempts/*`);
    expect(await page().getByTestId('attempt-request-headers').innerText()).toContain('wf-run-id');
    expect(await page().getByTestId('attempt-response-headers').innerText()).toContain('content-type');
    expect(await page().getByTestId('attempt-response-body').innerText()).toContain('"name":"initial-step"');
    await screenshot(page(), 'attempt-desktop');
  });

  it("shows a failed run's error, and the failing step's status and error", async () => {
    await open(`/runs/${ids.failing}`);
    await waitForText(page().getByTestId('run-status'), 'failed');
    const error = await waitForText(page().getByTestId('run-result'), 'card declined: insufficient funds');
    expect(error).toContain('NonRetryableError');
    await page().getByTestId('step-item').filter({ hasText: 'charge-card' }).click();
    await waitForText(page().getByTestId('step-status'), 'failed');
    expect(await page().getByTestId('step-detail').getByTestId('error').innerText()).toContain(
      'card declined: insufficient funds',
    );
    expect(await page().getByTestId('step-item').filter({ hasText: 'reserve-stock' }).innerText()).toContain(
      'succeeded',
    );
    await screenshot(page(), 'step-failed-desktop');
  });

  it('shows what a step printed (its logs, attempt by attempt) on the step, and on the attempt it ran in', async () => {
    await open(`/runs/${ids.failing}/steps/0`);
    await waitForText(page().getByTestId('step-status'), 'succeeded');
    expect(await page().getByTestId('step-logs-empty').innerText()).toBe('This step printed nothing.');
    await page().getByTestId('step-item').filter({ hasText: 'charge-card' }).click();
    await page().waitForURL(`**/runs/${ids.failing}/steps/1`);
    const logs = page().getByTestId('step-logs-section');
    await waitForText(logs, 'card declined');
    const lines = page().getByTestId('step-detail').getByTestId('log-line');
    expect(await lines.count()).toBe(2);
    expect(await lines.nth(0).innerText()).toMatch(/^\d\d:\d\d:\d\d\.\d{3} log\s+charging order 42$/);
    expect(await lines.nth(1).getAttribute('data-level')).toBe('error');
    expect(await lines.nth(1).innerText()).toMatch(/error card declined code="insufficient_funds" amount=4200$/);
    expect(await page().getByTestId('step-log').innerText()).toMatch(/attempt #1\s+failed\s+2 lines/);
    await screenshot(page(), 'step-logs-desktop');
    // The attempt the step failed in shows the same lines, linked back to the step.
    await page().getByTestId('step-log').getByRole('link', { name: 'attempt #1' }).click();
    await page().waitForURL(`**/runs/${ids.failing}/attempts/1`);
    const attemptLogs = await waitForText(page().getByTestId('attempt-logs-section'), 'charging order 42');
    expect(attemptLogs).toContain('step #1 charge-card');
    await screenshot(page(), 'attempt-logs-desktop');
  });

  it('says when the app is unreachable and when the next try is, in the runs list and on the run page', async () => {
    const response = await fetch(`${runner.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${await unusedPort()}/workflow`, body: '{}', headers: {} }),
    });
    const { workflowRunId: id } = (await response.json()) as { workflowRunId: string };
    await waitForRun(runner.runner, id, (run) => run.unreachableSince !== null);
    await open('/');
    const listed = await waitForText(row(id), 'app unreachable since');
    expect(listed).toContain('next try at');
    await page().goto(`${runner.url}/runs/${id}`);
    const notes = await waitForText(page().getByTestId('run-notes'), 'app unreachable since');
    expect(notes).toMatch(/app unreachable since .+, next try at .+/);
    await runner.runner.cancelRun(id);
  });

  it('shows bodies as data: markup and javascript: URLs in outputs and inputs do not run', async () => {
    await open(`/runs/${ids.xss}`);
    await waitForText(page().getByTestId('run-status'), 'completed');
    expect(await page().getByTestId('run-body').innerText()).toContain(
      JSON.stringify(XSS_TEXT).slice(1, -1).replaceAll('\\"', '"'),
    );
    await page().getByTestId('step-item').filter({ hasText: 'link' }).click();
    await waitForText(page().getByTestId('step-output'), JS_URL);
    await page().getByTestId('step-item').filter({ hasText: 'markup' }).click();
    await waitForText(page().getByTestId('step-output'), XSS_TEXT);
    expect(await page().getByTestId('step-output').innerText()).toBe(JSON.stringify(XSS_TEXT));
    expect(await page().evaluate(() => (window as { __xss?: unknown }).__xss)).toBeUndefined();
    expect(await page().locator('img[src="x"], script:not([src]), a[href^="javascript:"]').count()).toBe(0);
    await screenshot(page(), 'step-xss-desktop');
  });

  it('shows sleep, wait, call and parallel steps with their kind, wake-up, event id and HTTP exchange', async () => {
    await open(`/runs/${ids.sleep}`);
    const nap = page().getByTestId('step-item').filter({ hasText: 'nap' });
    await waitForText(nap, 'sleep');
    // Between 23:00 and midnight the wake-up is tomorrow, and the time carries its date (a space).
    expect(await nap.innerText()).toMatch(/wakes [^(]+ \(in (59m|1h)/);
    await nap.click();
    expect(await page().getByTestId('step-detail').innerText()).toMatch(/Wakes at\s+[^(]+ \(in/);
    await screenshot(page(), 'step-sleep-desktop');

    await page().goto(`${runner.url}/runs/${ids.wait}`);
    const wait = page().getByTestId('step-item').filter({ hasText: 'await-payment' });
    await waitForText(wait, 'event order-42-paid');
    await wait.click();
    expect(await page().getByTestId('event-id').innerText()).toBe('order-42-paid');
    expect(await page().getByTestId('step-detail').innerText()).toMatch(/Times out at/);
    await screenshot(page(), 'step-wait-desktop');

    await page().goto(`${runner.url}/runs/${ids.call}`);
    await waitForText(page().getByTestId('run-status'), 'completed');
    await page().getByTestId('step-item').filter({ hasText: 'fetch-inventory' }).click();
    const request = await waitForText(page().getByTestId('call-request'), `POST ${apps.target.url}/inventory`);
    expect(request).toMatch(/x-request-id\s+req-77/);
    expect(request).toContain('"sku": "A-1"');
    expect(await page().getByTestId('call-status').innerText()).toBe('201');
    expect(await page().getByTestId('call-headers').innerText()).toMatch(/x-inventory\s+warehouse-7/);
    expect(await page().getByTestId('call-body').innerText()).toContain('"gadget"');
    expect(await page().getByTestId('step-item').filter({ hasText: 'fetch-inventory' }).innerText()).toContain('call');
    await screenshot(page(), 'step-call-desktop');

    await page().goto(`${runner.url}/runs/${ids.parallel}`);
    const group = page().getByTestId('parallel-group');
    await waitForText(group, 'fetch-a');
    expect(await group.getByTestId('step-item').count()).toBe(2);
    expect(await group.innerText()).toContain('fetch-b');
    expect(await group.innerText()).not.toContain('merge');
    // The timeline brackets the same two rows (view/timeline.ts finds the group too).
    const bracketed = page().getByTestId('timeline').locator('.tl-parallel');
    expect(await bracketed.evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.stepIndex))).toEqual([
      '0',
      '1',
    ]);
    await screenshot(page(), 'run-parallel-desktop');
  });
});

describe('web dashboard: live, filters, actions', () => {
  it('shows a run started while the page is open and follows it to the end, without a reload', async () => {
    await open('/');
    await waitForText(page().getByTestId('stream'), 'live');
    await page().evaluate(() => ((window as { __same?: number }).__same = 1));
    const id = await startThroughApp(apps.held.url, {});
    await waitForText(row(id), 'running');
    apps.release();
    await waitForText(row(id), 'completed');

    // A waiting run's page turns when the event arrives.
    await page().getByRole('link', { name: ids.wait! }).click();
    await waitForText(page().getByTestId('run-status'), 'waiting');
    await runner.runner.notify('order-42-paid', { amount: 10 });
    await waitForText(page().getByTestId('run-status'), 'completed');
    await waitForText(page().getByTestId('step-item').filter({ hasText: 'ship' }), 'succeeded');
    // Live events are slim (no outputs): the page reads the open run again to show its output.
    await waitForText(page().getByTestId('run-output'), '"amount": 10');
    expect(await page().evaluate(() => (window as { __same?: number }).__same)).toBe(1);
  });

  it('reconnects when the runner comes back, and catches up on what it missed', async () => {
    // A second API server over the same runner, so the test can take it down and bring it back.
    const server = createApiServer(runner.runner, { host: '127.0.0.1', openOnLoopback: true, dashboardDir: web });
    const port = await listen(server);
    try {
      await open('/', { baseUrl: `http://127.0.0.1:${port}` });
      await waitForText(page().getByTestId('stream'), 'live');
      await closeServer(server);
      await waitForText(page().getByTestId('stream'), 'reconnecting');
      const missed = await startThroughApp(apps.twoStep.url, { text: 'while away' });
      await waitForFinish(runner.runner, missed);
      await listen(server, port);
      await waitForText(page().getByTestId('stream'), 'live');
      await waitForText(row(missed), 'completed');
    } finally {
      await closeServer(server);
    }
  });

  it('filters runs by status', async () => {
    await open('/');
    await waitForText(row(ids.twoStep!), 'completed');
    await page().getByRole('link', { name: 'failed', exact: true }).click();
    await page().waitForURL('**/runs?status=failed');
    await waitForText(row(ids.failing!), 'failed');
    const statuses = await page()
      .getByTestId('run-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status')));
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set(['failed']));
    await screenshot(page(), 'runs-failed-desktop');
    await page().getByRole('link', { name: 'all', exact: true }).click();
    await waitForText(row(ids.twoStep!), 'completed');
  });

  it('cancels and reruns from the page on loopback, with no login', async () => {
    const id = await startThroughApp(apps.sleep.url, {});
    await waitForRun(runner.runner, id, (run) => run.status === 'sleeping');
    await open(`/runs/${id}`);
    await waitForText(page().getByTestId('run-status'), 'sleeping');
    await page().getByRole('button', { name: 'Cancel run' }).click();
    await page().getByRole('button', { name: 'Yes, cancel' }).click();
    await waitForText(page().getByTestId('run-status'), 'cancelled');
    expect((await runner.store.getRun(id))!.status).toBe('cancelled');
    await waitForText(page().getByTestId('step-item').filter({ hasText: 'nap' }), 'cancelled');
    await expect(page().getByRole('button', { name: 'Cancel run' }).count()).resolves.toBe(0);

    await page().goto(`${runner.url}/runs/${ids.twoStep}`);
    await page().getByRole('button', { name: 'Rerun' }).click();
    await page().waitForURL((url) => /\/runs\/wfr_/.test(url.pathname) && !url.pathname.endsWith(ids.twoStep!));
    const rerun = decodeURIComponent(new URL(page().url()).pathname.split('/')[2]!);
    await waitForText(page().getByTestId('run-status'), 'completed');
    expect(await page().getByTestId('run-body').innerText()).toContain('"text": "hello"');
    expect((await runner.store.getRun(rerun))!.body).toBe((await runner.store.getRun(ids.twoStep!))!.body);
  });

  it('copies ids and bodies to the clipboard', async () => {
    await browser().context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: runner.url });
    await open(`/runs/${ids.twoStep}`);
    await waitForText(page().getByTestId('run-status'), 'completed');
    await page().getByRole('button', { name: 'Copy run id' }).click();
    expect(await page().evaluate(() => navigator.clipboard.readText())).toBe(ids.twoStep);
    await page().getByRole('button', { name: 'Copy start body' }).click();
    expect(JSON.parse(await page().evaluate(() => navigator.clipboard.readText()))).toEqual({ text: 'hello' });
  });

  it('fits a phone screen: panels stack, nothing scrolls sideways', async () => {
    await open('/');
    await page().setViewportSize({ width: 390, height: 844 });
    await waitForText(row(ids.twoStep!), 'completed');
    const overflow = (): Promise<number> =>
      page().evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(await overflow()).toBeLessThanOrEqual(0);
    await screenshot(page(), 'runs-phone');
    await page().goto(`${runner.url}/runs/${ids.call}`);
    await waitForText(page().getByTestId('run-status'), 'completed');
    expect(await overflow()).toBeLessThanOrEqual(0);
    await screenshot(page(), 'run-phone');
    await page().getByTestId('step-item').filter({ hasText: 'fetch-inventory' }).click();
    await waitForText(page().getByTestId('call-status'), '201');
    expect(await overflow()).toBeLessThanOrEqual(0);
    // The open step comes first on a phone: no scrolling past the list to find it.
    const detailTop = await page()
      .getByTestId('step-detail')
      .evaluate((el) => el.getBoundingClientRect().top);
    const stepsTop = await page()
      .getByTestId('steps')
      .evaluate((el) => el.getBoundingClientRect().top);
    expect(detailTop).toBeLessThan(stepsTop);
    await screenshot(page(), 'step-call-phone');
  });
});

describe('web dashboard: look', () => {
  it('follows the system dark mode', async () => {
    await open(`/runs/${ids.failing}/steps/1`);
    await page().emulateMedia({ colorScheme: 'dark' });
    await waitForText(page().getByTestId('step-status'), 'failed');
    const background = await page().evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe('rgb(18, 21, 27)');
    expect(await page().title()).toBe(`step #1 · ${ids.failing} · wfkit runner`);
    await screenshot(page(), 'step-failed-dark');
  });
});

describe('web dashboard: not on loopback', () => {
  let remote: TestRunner;
  let runId: string;
  let closeApp: () => Promise<void>;

  beforeAll(async () => {
    // The policy of a runner bound to 0.0.0.0 (it still listens on 127.0.0.1 here).
    remote = await startTestRunner({ api: { host: '0.0.0.0', dashboardDir: web } });
    const app = await startApp(async (context) => context.run('only-step', () => 'secret output'), {
      token: remote.token,
      runnerUrl: remote.url,
    });
    closeApp = app.close;
    runId = await startThroughApp(app.url, { text: 'remote' });
    await waitForFinish(remote.runner, runId);
  });

  afterAll(async () => {
    await closeApp?.();
    await remote?.close();
  });

  it('shows the login form and no data until the token is entered, then works', async () => {
    await open(`/runs/${runId}`, { baseUrl: remote.url });
    const login = page().getByTestId('login');
    await login.waitFor();
    expect(await page().locator('body').innerText()).not.toContain('secret output');
    await expect(page().getByRole('button', { name: 'Rerun' }).count()).resolves.toBe(0);
    // The page cannot reach the data, nor act, without the token, whatever it tries.
    const statuses = await page().evaluate(async (id) => {
      const read = await fetch('/v1/runs');
      const events = await fetch('/v1/events');
      const cancel = await fetch(`/v1/runs/${id}/rerun`, { method: 'POST' });
      return [read.status, events.status, cancel.status];
    }, runId);
    expect(statuses).toEqual([401, 401, 401]);
    await screenshot(page(), 'login-desktop');

    await page().getByLabel('Token').fill('wrong-token');
    await page().getByRole('button', { name: 'Sign in' }).click();
    await waitForText(login, 'The runner refused this token.');
    await page().getByLabel('Token').fill(remote.token);
    await page().getByRole('button', { name: 'Sign in' }).click();
    await waitForText(page().getByTestId('run-status'), 'completed');
    expect(await page().evaluate(() => sessionStorage.getItem('wfkit.token'))).toBe(remote.token);
    await page().getByTestId('step-item').filter({ hasText: 'only-step' }).click();
    expect(await page().getByTestId('step-output').innerText()).toBe('"secret output"');

    // With the token, the actions are there and work.
    await page().getByRole('button', { name: 'Rerun' }).click();
    await page().waitForURL((url) => /\/runs\/wfr_/.test(url.pathname) && !url.pathname.includes(runId));
    await waitForText(page().getByTestId('run-status'), 'completed');
    expect((await remote.store.listRuns({})).runs).toHaveLength(2);

    // A reload keeps the session (same tab); signing out forgets the token.
    await page().reload();
    await waitForText(page().getByTestId('run-status'), 'completed');
    await page().getByRole('button', { name: 'Sign out' }).click();
    await login.waitFor();
    expect(await page().evaluate(() => sessionStorage.getItem('wfkit.token'))).toBeNull();
  });
});

describe('web dashboard: flow control', () => {
  it('says why a run waits on flow control, in the runs list and on the run page', async () => {
    const held = gate();
    const app = await startApp(async (context) => context.run('slot', async () => (await held.promise, 'done')), {
      token: runner.token,
      runnerUrl: runner.url,
    });
    try {
      const client = new Client({ runnerUrl: runner.url, token: runner.token });
      const flowControl = { key: 'tenant-42', parallelism: 1 };
      const first = (await client.trigger({ url: app.url, body: {}, flowControl })).workflowRunId;
      await waitForRun(runner.runner, first, (run) => run.status === 'running');
      const second = (await client.trigger({ url: app.url, body: {}, flowControl })).workflowRunId;
      await waitForRun(runner.runner, second, (run) => run.queuedReason !== undefined);
      await open('/');
      expect(await waitForText(row(second), 'flow control')).toContain(
        'waiting: flow control `tenant-42`: 1 of 1 running',
      );
      await page().goto(`${runner.url}/runs/${second}`);
      expect(await waitForText(page().getByTestId('run-notes'), 'flow control')).toContain(
        'waiting: flow control `tenant-42`: 1 of 1 running',
      );
      await screenshot(page(), 'run-flow-control-waiting');
      held.open();
      await waitForFinish(runner.runner, second);
    } finally {
      held.open();
      await app.close();
    }
  });
});
