import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '../../api/client.js';
import { NonRetryableError } from '../../protocol/errors.js';
import { buildWeb } from '../../web/build.js';
import { startApp, startTestRunner, waitForFinish, type TestApp, type TestRunner } from '../helpers/runner.js';
import { screenshot } from './browser.js';
import { usePages } from './pages.js';

/** The web dashboard's run search, in real headless Chromium against a real runner and two real apps. */

let web: string;
let runner: TestRunner;
let shop: TestApp;
let mail: TestApp;
let client: Client;
const made = { completed: [] as string[], failed: [] as string[], mail: [] as string[] };
let beforeMail = 0;

async function finished(url: string, body: unknown): Promise<string> {
  const { workflowRunId } = await client.trigger({ url, body, retries: 0 });
  await waitForFinish(runner.runner, workflowRunId);
  return workflowRunId;
}

const { open, page } = usePages(() => runner.url);

beforeAll(async () => {
  web = mkdtempSync(join(tmpdir(), 'wfkit-web-build-'));
  await buildWeb(web);
  runner = await startTestRunner({ api: { dashboardDir: web } });
  const options = { token: runner.token, runnerUrl: runner.url };
  shop = await startApp(
    async (context) => {
      await context.run('reserve', () => 'reserved');
      await context.run('charge', () => {
        if ((context.requestPayload as { fail?: boolean }).fail) throw new NonRetryableError('card declined');
        return 'charged';
      });
    },
    { ...options, path: '/api/checkout' },
  );
  mail = await startApp(async (context) => context.run('send', () => 'sent'), { ...options, path: '/api/mail' });
  client = new Client({ runnerUrl: runner.url, token: runner.token });
  for (const fail of [false, true, false, true])
    (fail ? made.failed : made.completed).push(await finished(shop.url, { fail }));
  await new Promise((resolve) => setTimeout(resolve, 20));
  beforeMail = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 5));
  made.mail.push(await finished(mail.url, {}));
});

afterAll(async () => {
  await mail?.close();
  await shop?.close();
  await runner?.close();
  rmSync(web, { recursive: true, force: true });
});

/** The run ids listed, top to bottom, once they equal `expected` (the list loads and re-renders). */
async function expectListed(expected: string[]): Promise<void> {
  let last: string[] = [];
  try {
    await vi.waitFor(
      async () => {
        last = await page()
          .getByTestId('run-row')
          .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-run-id') ?? ''));
        expect(last).toEqual(expected);
      },
      { timeout: 10_000, interval: 50 },
    );
  } catch {
    throw new Error(`Expected the runs ${JSON.stringify(expected)} listed; saw ${JSON.stringify(last)}`);
  }
}

const newestFirst = (ids: string[]): string[] => [...ids].sort().reverse();

describe('web dashboard: finding runs', () => {
  it('searches by failed step, keeps the search across status chips, then clears it', async () => {
    await open('/');
    await expectListed(newestFirst([...made.completed, ...made.failed, ...made.mail]));
    const bar = page().getByTestId('run-search');
    await bar.getByLabel('Failed step').fill('charge');
    await bar.getByRole('button', { name: 'Search' }).click();
    await expectListed(newestFirst(made.failed));
    expect(new URL(page().url()).searchParams.get('failedStep')).toBe('charge');
    await screenshot(page(), 'runs-search-failed-step');
    // The bulk action counts what the search lists, not every run.
    await page().getByRole('button', { name: 'Rerun all runs matching the search…' }).click();
    await page()
      .getByTestId('bulk-confirm')
      .getByText(`Rerun ${made.failed.length} runs matching the search?`)
      .waitFor();
    await page().getByTestId('bulk-confirm').getByRole('button', { name: 'No' }).click();

    await page()
      .getByRole('navigation', { name: 'Filter runs by status' })
      .getByRole('link', { name: 'completed', exact: true })
      .click();
    await expectListed([]);
    await page().getByText('No completed runs match this search.').waitFor();
    expect(new URL(page().url()).searchParams.get('status')).toBe('completed');
    expect(new URL(page().url()).searchParams.get('failedStep')).toBe('charge');

    await page()
      .getByRole('navigation', { name: 'Filter runs by status' })
      .getByRole('link', { name: 'all', exact: true })
      .click();
    await expectListed(newestFirst(made.failed));
    await bar.getByRole('button', { name: 'Clear' }).click();
    await expectListed(newestFirst([...made.completed, ...made.failed, ...made.mail]));
    expect(await bar.getByLabel('Failed step').inputValue()).toBe('');
  });

  it('finds a run by an id prefix and by a workflow URL prefix', async () => {
    await open('/');
    const bar = page().getByTestId('run-search');
    const target = made.completed[1]!;
    await bar.getByLabel('Run id').fill(target.slice(0, -2));
    await bar.getByLabel('Run id').press('Enter');
    await expectListed([target]);

    await bar.getByLabel('Run id').fill('');
    await bar.getByLabel('Workflow URL starts with').fill(mail.url.replace('/api/mail', '/api/m'));
    await bar.getByRole('button', { name: 'Search' }).click();
    await expectListed(made.mail);
    await screenshot(page(), 'runs-search-url-prefix');
    // On a phone the fields wrap; the bar stays inside the page (no sideways scroll).
    await page().setViewportSize({ width: 390, height: 844 });
    expect(await page().evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(page(), 'runs-search-phone');
  });

  it('opens a copied address with a time range, fields filled in', async () => {
    await open(`/runs?createdAfter=${beforeMail}`);
    await expectListed(made.mail);
    const from = await page().getByTestId('run-search').getByLabel('Created from').inputValue();
    expect(from).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
    await open(`/runs?createdBefore=${new Date(beforeMail).toISOString()}&status=failed`);
    await expectListed(newestFirst(made.failed));
  });

  it('a live list with a search adds new runs that match and leaves out those that do not', async () => {
    await open(`/runs?urlPrefix=${encodeURIComponent(shop.url)}`);
    const before = newestFirst([...made.completed, ...made.failed]);
    await expectListed(before);
    await finished(mail.url, {});
    const matching = await finished(shop.url, { fail: false });
    await expectListed([matching, ...before]);
  });
});
