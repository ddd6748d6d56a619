import type { Page } from 'playwright-core';
import { afterEach, expect } from 'vitest';
import { watchPage, type Browser } from './browser.js';

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
}

const DESKTOP: ViewportSize = { width: 1280, height: 800 };

/**
 * One page a test for the web e2e suites: `open` makes it, and after each test it is closed and
 * must have seen no page error and no CSP violation (which would mean inline code or styles).
 * `target` is read when a page opens, so it may name what `beforeAll` starts.
 */
export function usePages(target: () => { browser: Browser; baseUrl: string }): Pages {
  let current: Page | undefined;
  let problems: string[] = [];

  afterEach(async () => {
    const seen = problems;
    await current?.close();
    current = undefined;
    problems = [];
    expect(seen, 'page errors or CSP violations').toEqual([]);
  });

  return {
    async open(path, { viewport = DESKTOP, baseUrl } = {}) {
      const { browser, baseUrl: base } = target();
      current = await browser.context.newPage();
      problems = watchPage(current);
      await current.setViewportSize(viewport);
      await current.goto((baseUrl ?? base) + path);
      return current;
    },
    page() {
      if (!current) throw new Error('No page is open: call open(path) first in this test.');
      return current;
    },
  };
}
