import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { vi } from 'vitest';
import { requireSystemDependency } from '../setup/system-deps.js';

/** Screenshots land here; CI keeps them as artifacts; git ignores them. */
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile (its own user-data-dir), no network but what a page asks for. */
export async function launchBrowser(): Promise<Browser> {
  // Debian's Chromium (found or named by the system dependency list); playwright-core only drives it.
  const executablePath = requireSystemDependency('chromium');
  const profile = mkdtempSync(join(tmpdir(), 'wfkit-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** What went wrong inside a page: uncaught errors and CSP violations (which would mean inline code or styles). */
export function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text()))
      problems.push(`console: ${message.text()}`);
  });
  return problems;
}

/** Waits until the element's visible text contains `text`; fails with the last text seen. */
export async function waitForText(locator: Locator, text: string, timeout = 10_000): Promise<string> {
  let last = '';
  try {
    return await vi.waitFor(
      async () => {
        last =
          (await locator
            .first()
            .innerText({ timeout: 1000 })
            .catch(() => '')) ?? '';
        if (!last.includes(text)) throw new Error('not yet');
        return last;
      },
      { timeout, interval: 50 },
    );
  } catch {
    throw new Error(
      `Expected ${String(locator)} to show "${text}" within ${timeout} ms; it showed: ${JSON.stringify(last.slice(0, 500))}`,
    );
  }
}

/** Saves a full-page PNG to test/artifacts/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
