import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { launchBrowser, watchPage, type Browser } from './browser.js';

export interface ViewportSize {
  width: number;
  height: number;
}

export interface OpenOptions {
  /** @default 1280 x 800, a desktop */
  viewport?: ViewportSize;
  /** Where `path` is resolved; @default the suite's base URL */
  baseUrl?: string;
}

export interface Pages {
  /** Opens `path` in a new page, watched for page errors and CSP violations; it becomes `page()`. */
  open(path: string, options?: OpenOptions): Promise<Page>;
  /** The page the current test opened last. */
  page(): Page;
  /** The suite's browser (for what a page cannot do itself, like granting permissions). */
  browser(): Browser;
}

const DESKTOP: ViewportSize = { width: 1280, height: 800 };

/**
 * The web e2e suites' browser and pages: a headless Chromium for the suite (launched before it,
 * closed after it) and one page a test. `open` makes the page; after each test it is closed and
 * must have seen no page error and no CSP violation (which would mean inline code or styles).
 * `baseUrl` is read when a page opens, so it may name the runner a `beforeAll` starts.
 */
export function usePages(baseUrl: () => string): Pages {
  let browser: Browser | undefined;
  let current: Page | undefined;
  let problems: string[] = [];

  beforeAll(async () => {
    browser = await launchBrowser();
  });

  afterEach(async () => {
    const seen = problems;
    await current?.close();
    current = undefined;
    problems = [];
    expect(seen, 'page errors or CSP violations').toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
  });

  const pages: Pages = {
    async open(path, { viewport = DESKTOP, baseUrl: base = baseUrl() } = {}) {
      current = await pages.browser().context.newPage();
      problems = watchPage(current);
      await current.setViewportSize(viewport);
      await current.goto(base + path);
      return current;
    },
    page() {
      if (!current) throw new Error('No page is open: call open(path) first in this test.');
      return current;
    },
    browser() {
      if (!browser) throw new Error('No browser: usePages() launches it in beforeAll, so use it inside a test.');
      return browser;
    },
  };
  return pages;
}
