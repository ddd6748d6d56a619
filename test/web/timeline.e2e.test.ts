import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workflow } from '../../serve/core/handler.js';
import { buildWeb } from '../../web/build.js';
import { startServer, type Endpoint } from '../helpers/endpoint.js';
import {
  startApp,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  waitForRun,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';
import { screenshot, waitForText } from './browser.js';
import { usePages } from './pages.js';

/**
 * The run page's timeline in real headless Chromium, against a real runner and a real app on
 * 127.0.0.1: a step retried twice, two steps in parallel, a sleep and an HTTP call, each drawn
 * where it happened. Positions are read from the laid-out boxes, so the assertions hold what a
 * person sees, not what the markup says. Screenshots go to test/artifacts/.
 */

let web: string;
let runner: TestRunner;
let app: TestApp;
let napper: TestApp;
let quick: TestApp;
let waiter: TestApp;
let target: Endpoint;
let checkoutId: string;
let napId: string;
let chargeFailuresLeft = 2;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const { open, page } = usePages(() => runner.url);

beforeAll(async () => {
  web = mkdtempSync(join(tmpdir(), 'wfkit-web-build-'));
  await buildWeb(web);
  runner = await startTestRunner({ api: { dashboardDir: web } });
  target = await startServer(
    (_req, res) =>
      void pause(40).then(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"sent":true}')),
  );
  const options = { token: runner.token, runnerUrl: runner.url };
  const checkout: Workflow = async (context) => {
    await context.run('reserve', () => 'reserved');
    await Promise.all([
      context.run('price-a', () => pause(60).then(() => 1)),
      context.run('price-b', () => pause(60).then(() => 2)),
    ]);
    await context.run('charge', () => {
      if (chargeFailuresLeft-- > 0) throw new Error('card network down');
      return 'charged';
    });
    await context.sleep('cool-down', '400ms');
    await context.call('notify', { url: `${target.url}/notify`, method: 'POST', body: { ok: true } });
  };
  app = await startApp(checkout, { ...options, retries: 3, retryDelay: 100 });
  napper = await startApp(async (context) => {
    await context.run('warm-up', () => 'ok');
    await context.sleep('long-nap', '1h');
  }, options);
  quick = await startApp(async (context) => context.run('only', () => 1), options);
  waiter = await startApp(async (context) => {
    await context.waitForEvent('await-approval', 'approval-7', { timeout: '1h' });
    await context.run('ship', () => 'shipped');
  }, options);
  checkoutId = await startThroughApp(app.url, {});
  napId = await startThroughApp(napper.url, {});
  await waitForFinish(runner.runner, checkoutId, 20_000);
  await waitForRun(runner.runner, napId, (run) => run.status === 'sleeping');
});

afterAll(async () => {
  await runner?.close();
  await app?.close();
  await napper?.close();
  await quick?.close();
  await waiter?.close();
  await target?.close();
  rmSync(web, { recursive: true, force: true });
});

const timelineRow = (key: string): Locator =>
  page().getByTestId('timeline').locator(`[data-testid="timeline-row"][data-key="${key}"]`);

/** The laid-out x extent of every span of a kind in a row, left to right. */
async function boxes(row: Locator, kind: string): Promise<{ left: number; right: number }[]> {
  const found = await row.locator(`[data-testid="timeline-span"][data-kind="${kind}"]`).evaluateAll((spans) =>
    spans.map((span) => {
      const box = span.getBoundingClientRect();
      return { left: box.left, right: box.right };
    }),
  );
  return found.sort((a, b) => a.left - b.left);
}

describe('web dashboard: the run timeline', () => {
  it('draws every step where it happened: retries with their failures, parallel steps side by side, the sleep and the call after them', async () => {
    await open(`/runs/${checkoutId}`);
    await waitForText(page().getByTestId('run-status'), 'completed');
    const timeline = page().getByTestId('timeline');
    await waitForText(timeline, 'notify');
    const keys = await timeline
      .getByTestId('timeline-row')
      .evaluateAll((rows) => rows.map((row) => (row as HTMLElement).dataset.key));
    expect(keys).toEqual(['run', 'step-0', 'step-1', 'step-2', 'step-3', 'step-4', 'step-5']);

    // The run row: the queue delay, then one bar per drive request.
    const run = timelineRow('run');
    expect(await boxes(run, 'queued')).toHaveLength(1);
    expect((await boxes(run, 'drive')).length).toBeGreaterThanOrEqual(4);

    // The retried step: three executions, a failure mark on each of the first two, a wait between.
    const charge = timelineRow('step-3');
    const executions = await boxes(charge, 'executing');
    expect(executions).toHaveLength(3);
    expect(await boxes(charge, 'retry-wait')).toHaveLength(2);
    expect(await charge.getByTestId('timeline-failure').count()).toBe(2);
    expect(await charge.getByTestId('timeline-failure').first().getAttribute('title')).toMatch(
      /^failed \(attempt \d+\): card network down$/,
    );

    // Started together: the two bars overlap in time, and both are bracketed as parallel.
    const [a] = await boxes(timelineRow('step-1'), 'executing');
    const [b] = await boxes(timelineRow('step-2'), 'executing');
    expect(a!.left).toBeLessThan(b!.right);
    expect(b!.left).toBeLessThan(a!.right);
    expect(await timeline.locator('.tl-parallel').count()).toBe(2);

    // In order: the sleep begins after the last execution of `charge`, the call after the sleep
    // (within the 2 px a bar of a millisecond is drawn at, at least).
    const [sleep] = await boxes(timelineRow('step-4'), 'sleeping');
    const [call] = await boxes(timelineRow('step-5'), 'calling');
    expect(sleep!.left).toBeGreaterThanOrEqual(executions[2]!.left);
    expect(sleep!.left).toBeGreaterThanOrEqual(executions[2]!.right - 3);
    expect(call!.left).toBeGreaterThanOrEqual(sleep!.right - 3);
    // 400 ms of sleep is wider than the 60 ms the parallel steps took.
    expect(sleep!.right - sleep!.left).toBeGreaterThan(a!.right - a!.left);

    const legend = await page().locator('.tl-legend').innerText();
    for (const label of [
      'queued',
      'drive request',
      'executing',
      'waiting to retry',
      'sleeping',
      'call in flight',
      'failed attempt',
    ])
      expect(legend).toContain(label);
    await screenshot(page(), 'timeline-desktop');
  });

  it('opens the step when its bar is clicked, and marks it selected', async () => {
    await open(`/runs/${checkoutId}`);
    await waitForText(page().getByTestId('timeline'), 'charge');
    // The bar of the execution that succeeded (no failure mark on it).
    await timelineRow('step-3').locator('[data-kind="executing"]').last().click();
    await page().waitForURL(`**/runs/${checkoutId}/steps/3`);
    await waitForText(page().getByTestId('step-status'), 'succeeded');
    expect(await timelineRow('step-3').getAttribute('class')).toContain('selected');
    await screenshot(page(), 'timeline-step-open');
    await timelineRow('run').locator('[data-kind="drive"]').last().click();
    await page().waitForURL(`**/runs/${checkoutId}`);
  });

  it('opens the attempt a failure mark stands for', async () => {
    await open(`/runs/${checkoutId}`);
    const mark = timelineRow('step-3').getByTestId('timeline-failure').first();
    const seq = /attempt (\d+)/.exec((await mark.getAttribute('title')) ?? '')?.[1];
    expect(seq).toBeDefined();
    await mark.click();
    await page().waitForURL(`**/runs/${checkoutId}/attempts/${seq}`);
    await waitForText(page().getByTestId('attempt-response-body'), 'card network down');
  });

  it('keeps a sleep under way open at the right edge and says when it wakes', async () => {
    await open(`/runs/${napId}`);
    await waitForText(page().getByTestId('run-status'), 'sleeping');
    const nap = timelineRow('step-1');
    await waitForText(nap, 'wakes in');
    expect(await nap.locator('[data-kind="sleeping"]').getAttribute('class')).toContain('tl-open');
    const track = await nap.locator('.tl-track').boundingBox();
    const [sleep] = await boxes(nap, 'sleeping');
    // The axis ends now, not in an hour: the open sleep reaches the track's right edge.
    expect(Math.abs(sleep!.right - (track!.x + track!.width))).toBeLessThanOrEqual(2);
    await screenshot(page(), 'timeline-sleeping');
  });

  it('follows a run live: a wait stays open until its event comes, then closes and the next step appears', async () => {
    const id = await startThroughApp(waiter.url, {});
    await waitForRun(runner.runner, id, (run) => run.status === 'waiting');
    await open(`/runs/${id}`);
    const wait = timelineRow('step-0');
    await waitForText(wait, 'times out in');
    expect(await wait.locator('[data-kind="waiting"]').getAttribute('class')).toContain('tl-open');
    await screenshot(page(), 'timeline-waiting');
    const notified = await fetch(`${runner.url}/v1/events/approval-7`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { ok: true } }),
    });
    expect(notified.status).toBeLessThan(300);
    // No reload: the page's event stream brings the step and the run.
    await waitForText(page().getByTestId('timeline'), 'ship');
    await waitForText(page().getByTestId('run-status'), 'completed');
    await expect.poll(() => wait.locator('[data-kind="waiting"]').getAttribute('class')).not.toContain('tl-open');
    expect(await wait.innerText()).not.toContain('times out');
    const [waited] = await boxes(wait, 'waiting');
    const [ship] = await boxes(timelineRow('step-1'), 'executing');
    expect(ship!.left).toBeGreaterThanOrEqual(waited!.right - 3);
  });

  it('shows the queue delay before the first drive of a delayed start', async () => {
    const response = await fetch(`${runner.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: quick.url, body: '{}', headers: {}, delayMs: 600 }),
    });
    expect(response.status).toBe(201);
    const { workflowRunId: id } = (await response.json()) as { workflowRunId: string };
    await waitForFinish(runner.runner, id);
    await open(`/runs/${id}`);
    await waitForText(page().getByTestId('timeline'), 'only');
    const track = await timelineRow('run').locator('.tl-track').boundingBox();
    const [queued] = await boxes(timelineRow('run'), 'queued');
    // 600 ms queued of a run that then took a few ms: most of the axis.
    expect((queued!.right - queued!.left) / track!.width).toBeGreaterThan(0.5);
    const [only] = await boxes(timelineRow('step-0'), 'executing');
    expect(only!.left).toBeGreaterThanOrEqual(queued!.right - 3);
    await screenshot(page(), 'timeline-queued');
  });

  it('fits a phone: the timeline comes after the steps and nothing scrolls sideways', async () => {
    // The phone's size before the page opens, so what is measured is the phone layout, not a desktop one mid-reflow.
    await open(`/runs/${checkoutId}`, { viewport: { width: 390, height: 844 } });
    await waitForText(page().getByTestId('timeline'), 'charge');
    await expect
      .poll(() => page().evaluate(() => document.documentElement.scrollWidth - window.innerWidth))
      .toBeLessThanOrEqual(0);
    const timelineTop = await page()
      .getByTestId('timeline')
      .evaluate((el) => el.getBoundingClientRect().top);
    const stepsTop = await page()
      .getByTestId('steps')
      .evaluate((el) => el.getBoundingClientRect().top);
    expect(stepsTop).toBeLessThan(timelineTop);
    await screenshot(page(), 'timeline-phone');
  });
});
