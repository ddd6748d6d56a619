import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWeb } from '../../web/build.js';
import {
  closeStarted,
  startApp,
  startTestRunner,
  startThroughApp,
  waitForRun,
  type TestRunner,
} from '../helpers/runner.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { screenshot, waitForText } from './browser.js';
import { usePages } from './pages.js';

/**
 * A failed run's alert in the web dashboard (real Chromium, a real runner with `alerts`, a real app,
 * a loopback webhook receiver): pending while the receiver refuses, in the runs list and on the run
 * page; delivered once it accepts, with each delivery an attempt one click from its request.
 */

let web: string;
let runner: TestRunner;
let hook: WebhookReceiver;
let accepting = false;

const { open } = usePages(() => runner.url);

beforeAll(async () => {
  web = mkdtempSync(join(tmpdir(), 'wfkit-web-build-'));
  await buildWeb(web);
  hook = await startWebhookReceiver(0, '/services/T0/B0/secret-path');
  hook.answer = () => ({ status: accepting ? 200 : 503 });
  // Slow retries (a second at least) so the page can be looked at while the alert is pending.
  runner = await startTestRunner({
    api: { dashboardDir: web },
    runner: {
      alerts: { webhookUrl: hook.url, publicUrl: 'https://wf.example.com' },
      unreachable: { baseMs: 1_000, capMs: 1_000 },
    },
  });
});

afterAll(async () => {
  await closeStarted();
  await hook?.close();
  rmSync(web, { recursive: true, force: true });
});

describe('web dashboard: failure alerts', () => {
  it('shows the alert pending while the receiver refuses, then delivered, each delivery an attempt', async () => {
    const app = await startApp(
      async (context) => {
        await context.run('charge', () => {
          throw new Error('card declined');
        });
      },
      { token: runner.token, runnerUrl: runner.url, retries: 0 },
    );
    const id = await startThroughApp(app.url);
    await waitForRun(runner.runner, id, (r) => r.alert === 'pending' && (r.alertAttempts ?? 0) >= 1);

    const page = await open('/');
    const row = page.locator(`[data-testid="run-row"][data-run-id="${id}"]`);
    expect(await waitForText(row, 'alert pending')).toMatch(/alert pending \(\d+ attempts?, next try at .+\)/);
    await page.goto(`${runner.url}/runs/${id}`);
    await waitForText(page.getByTestId('run-notes'), 'alert pending');
    await waitForText(page.getByTestId('attempts'), 'alert error');
    await screenshot(page, 'run-alert-pending-desktop');

    accepting = true;
    // Live: the page follows the run's events to the delivery.
    const notes = await waitForText(page.getByTestId('run-notes'), 'alert delivered', 15_000);
    expect(notes).toMatch(/alert delivered \(\d+ attempts?\)/);
    await waitForText(page.getByTestId('attempts'), 'alert delivered');
    await screenshot(page, 'run-alert-delivered-desktop');

    // The delivery's attempt: the signed request (the webhook's path hidden) and the receiver's answer.
    await page.getByTestId('attempt-item').filter({ hasText: 'alert delivered' }).click();
    await page.waitForURL(`**/runs/${id}/attempts/*`);
    const detail = await waitForText(page.getByTestId('attempt-detail'), 'POST');
    expect(detail).toContain(`POST http://127.0.0.1:${hook.port}/…`);
    expect(detail).not.toContain('secret-path');
    expect(await page.getByTestId('attempt-request-headers').innerText()).toMatch(/wf-alert-signature\s+\[redacted\]/);
    expect(detail).toContain(`https://wf.example.com/runs/${id}`);
    expect(await page.getByTestId('attempt-response-body').innerText()).toBe('ok');
    await screenshot(page, 'attempt-alert-desktop');
    expect(hook.accepted().map((d) => d.runId)).toEqual([id]);
  });
});
