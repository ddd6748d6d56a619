import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWeb } from '../../web/build.js';
import { startApp, startTestRunner, type TestApp, type TestRunner } from '../helpers/runner.js';
import { screenshot, waitForText } from './browser.js';
import { usePages } from './pages.js';

/** The web dashboard's schedules view in real headless Chromium, against a real runner and app. */

let web: string;
let runner: TestRunner;
let app: TestApp;

const { open } = usePages(() => runner.url);

beforeAll(async () => {
  web = mkdtempSync(join(tmpdir(), 'wfkit-web-build-'));
  await buildWeb(web);
  runner = await startTestRunner({ api: { dashboardDir: web } });
  app = await startApp(async (context) => context.run('tick', () => 1), { token: runner.token, runnerUrl: runner.url });
});

afterAll(async () => {
  await app?.close();
  await runner?.close();
  rmSync(web, { recursive: true, force: true });
});

describe('web dashboard: schedules', () => {
  it('lists a schedule with its next fire and the runs it started, and deletes the schedule', async () => {
    const schedule = await runner.runner.schedules.create({
      url: app.url,
      cron: '* * * * * *',
      body: '{"from":"cron"}',
    });
    const daily = await runner.runner.schedules.create({ url: app.url, cron: '0 9 * * 1-5', timezone: 'Europe/Paris' });
    // Stored while its origin was allowed: every tick is refused now, and the page says so.
    const refused = 'wfs_refused-origin';
    await runner.store.schedules.createSchedule({
      id: refused,
      url: 'https://elsewhere.example/wf',
      cron: '* * * * * *',
      timezone: 'UTC',
      body: '',
      headers: {},
      nextAt: Date.now(),
      lastFiredAt: null,
      lastRefusal: null,
      createdAt: Date.now(),
    });
    const page = await open('/');
    await page.getByTestId('schedules-link').click();
    const row = page.getByTestId(`schedule-${schedule.id}`);
    await waitForText(row.getByTestId('schedule-runs'), 'completed');
    await waitForText(page.getByTestId(`schedule-${daily.id}`), 'Europe/Paris');
    expect(await page.getByTestId(`schedule-${daily.id}`).getByTestId('next-fire').getAttribute('title')).toBe(
      new Date(daily.nextAt).toISOString(),
    );
    expect(await page.getByTestId(`schedule-${daily.id}`).getByTestId('schedule-runs').textContent()).toBe('none yet');
    await waitForText(
      page.getByTestId(`schedule-${refused}`).getByTestId('last-refusal'),
      'refused: ORIGIN_NOT_ALLOWED',
    );
    await screenshot(page, 'schedules-desktop');

    await row.getByRole('button', { name: 'Delete' }).click();
    await row.waitFor({ state: 'detached', timeout: 10_000 });
    expect(await runner.store.schedules.getSchedule(schedule.id)).toBeUndefined();

    await page.goto(`${runner.url}/schedules`);
    await waitForText(page.getByTestId('schedules'), daily.id);
  });
});
