import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP, findDashboardDir } from '../../runner-core/api/dashboard.js';
import { requestApp } from '../helpers/api-app.js';
import {
  startApp,
  startThroughApp,
  startTestRunner,
  waitForRun,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/**
 * How the runner serves the web dashboard (runner-core/api/dashboard.ts) and the two API rules it
 * adds: `GET /v1/session` for the login form, and cancel/rerun from the page itself on loopback.
 * The browser tests are in dashboard.e2e.test.ts.
 */

let fixture: string;
let runner: TestRunner | undefined;
let app: TestApp | undefined;

beforeAll(() => {
  fixture = mkdtempSync(join(tmpdir(), 'wfkit-web-'));
  writeFileSync(join(fixture, 'index.html'), '<!doctype html><title>fixture</title>');
  writeFileSync(join(fixture, 'app.js'), 'console.log(1);');
  writeFileSync(join(fixture, 'styles.css'), 'body{}');
  writeFileSync(join(fixture, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
});

afterAll(() => rmSync(fixture, { recursive: true, force: true }));

afterEach(async () => {
  await app?.close();
  await runner?.close();
  app = runner = undefined;
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A request to the API app, without a socket; the test sets Host and Origin as a browser (or an
 * attacker) would, and Host is the runner's own address unless it says otherwise.
 */
async function send(method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await requestApp(runner!.app, path, {
    method,
    headers: { host: new URL(runner!.url).host, ...headers },
  });
  return { status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
}

/** A run that stays sleeping (one hour), so cancel has something to cancel. */
async function sleepingRun(): Promise<string> {
  app = await startApp(
    async (context) => {
      await context.sleep('nap', '1h');
    },
    { token: runner!.token, runnerUrl: runner!.url },
  );
  const id = await startThroughApp(app.url, {});
  await waitForRun(runner!.runner, id, (run) => run.status === 'sleeping');
  return id;
}

describe('web dashboard: serving', () => {
  it('serves index.html for / and every /runs route, with a strict CSP and nosniff', async () => {
    runner = await startTestRunner({ api: { dashboardDir: fixture } });
    for (const path of [
      '/',
      '/runs',
      '/runs?status=failed',
      '/runs/wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B',
      '/runs/wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B/steps/2',
    ]) {
      const answer = await send('GET', path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(answer.body).toContain('<title>fixture</title>');
      expect(answer.headers['content-security-policy']).toBe(DASHBOARD_CSP);
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['cache-control']).toBe('no-cache');
    }
    expect(DASHBOARD_CSP).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    );
  });

  it('serves the assets with their content types, revalidated by ETag', async () => {
    runner = await startTestRunner({ api: { dashboardDir: fixture } });
    const types: Record<string, string> = {
      '/app.js': 'text/javascript; charset=utf-8',
      '/styles.css': 'text/css; charset=utf-8',
      '/favicon.svg': 'image/svg+xml',
    };
    for (const [path, type] of Object.entries(types)) {
      const answer = await send('GET', path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers['content-type'], path).toBe(type);
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      const etag = String(answer.headers.etag);
      expect(etag).toMatch(/^".+"$/);
      const again = await send('GET', path, { 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect(again.body).toBe('');
    }
    const head = await send('HEAD', '/app.js');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String('console.log(1);'.length));
    expect(head.body).toBe('');
  });

  it('leaves every other path to the API: JSON 404 and 405 as before', async () => {
    runner = await startTestRunner({ api: { dashboardDir: fixture } });
    for (const path of ['/nope', '/v1/nope', '/index.js', '/runsx', '/../package.json']) {
      const answer = await send('GET', path);
      expect(answer.status, path).toBe(404);
      expect(JSON.parse(answer.body).error.code).toBe('NOT_FOUND');
    }
    const post = await send('POST', '/');
    expect(post.status).toBe(404);
    expect(post.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('answers 503 with what to do when the dashboard is not built', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'wfkit-web-empty-'));
    try {
      runner = await startTestRunner({ api: { dashboardDir: empty } });
      const answer = await send('GET', '/runs/x');
      expect(answer.status).toBe(503);
      expect(answer.body).toContain('npm run build');
      expect(answer.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('finds the build of `npm run build` in dist/web', () => {
    const dir = findDashboardDir();
    expect(dir, 'dist/web is missing: run `npm run build` first').toBeDefined();
    for (const file of ['index.html', 'app.js', 'styles.css', 'favicon.svg'])
      expect(existsSync(join(dir!, file)), file).toBe(true);
  });

  it('serves the page without a token when not on loopback, while the data needs it', async () => {
    runner = await startTestRunner({ api: { host: '0.0.0.0', dashboardDir: fixture } });
    expect((await send('GET', '/')).status).toBe(200);
    expect((await send('GET', '/runs/wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B')).status).toBe(200);
    expect((await send('GET', '/v1/runs')).status).toBe(401);
    expect((await send('GET', '/v1/events')).status).toBe(401);
  });
});

describe('web dashboard: GET /v1/session', () => {
  it('says whether reads need the token, by the same rule as the reads', async () => {
    runner = await startTestRunner({ api: { dashboardDir: fixture } });
    const session = async (host: string): Promise<unknown> =>
      JSON.parse((await send('GET', '/v1/session', { host })).body);
    expect(await session(new URL(runner.url).host)).toEqual({ needsToken: false });
    expect(await session('localhost:7766')).toEqual({ needsToken: false });
    expect(await session('evil.example:7766')).toEqual({ needsToken: true });
    await runner.close();
    runner = await startTestRunner({ api: { host: '0.0.0.0', dashboardDir: fixture } });
    const open = await send('GET', '/v1/session');
    expect(open.status).toBe(200);
    expect(JSON.parse(open.body)).toEqual({ needsToken: true });
  });
});

describe('web dashboard: loopback without openOnLoopback (wf start)', () => {
  it('wants the token for reads, the session says so, and the page cannot cancel without it', async () => {
    runner = await startTestRunner({ api: { dashboardDir: fixture, openOnLoopback: false } });
    const id = await sleepingRun();
    const host = new URL(runner.url).host;
    expect(JSON.parse((await send('GET', '/v1/session')).body)).toEqual({ needsToken: true });
    for (const path of ['/v1/runs', `/v1/runs/${id}`, '/v1/events'])
      expect((await send('GET', path)).status, path).toBe(401);
    expect((await send('GET', '/')).status).toBe(200);
    expect((await send('GET', '/healthz')).status).toBe(200);
    expect((await send('POST', `/v1/runs/${id}/cancel`, { origin: `http://${host}` })).status).toBe(401);
    expect((await runner.store.getRun(id))!.status).toBe('sleeping');
    expect((await send('GET', '/v1/runs', { authorization: `Bearer ${runner.token}` })).status).toBe(200);
  });
});

describe('web dashboard: cancel and rerun from the page', () => {
  it('on loopback, accepts them without a token only from the page itself (same Origin)', async () => {
    runner = await startTestRunner({ api: { dashboardDir: fixture } });
    const id = await sleepingRun();
    const host = new URL(runner.url).host;
    const cancel = (headers: Record<string, string>): Promise<Answer> => send('POST', `/v1/runs/${id}/cancel`, headers);
    expect((await cancel({})).status).toBe(401);
    // Another site, or another local dev server on another port, cannot pass as the dashboard.
    expect((await cancel({ origin: 'https://evil.example' })).status).toBe(401);
    expect((await cancel({ origin: 'http://127.0.0.1:3000' })).status).toBe(401);
    expect((await cancel({ origin: 'null' })).status).toBe(401);
    // A rebinding page sends its own name as Host, and its own origin.
    expect((await cancel({ host: 'evil.example:7766', origin: 'http://evil.example:7766' })).status).toBe(401);
    // Starting runs and notifying stay token-only, whatever the origin.
    expect((await send('POST', '/v1/runs', { origin: `http://${host}` })).status).toBe(401);
    expect((await send('POST', '/v1/events/x', { origin: `http://${host}` })).status).toBe(401);
    expect((await runner.store.getRun(id))!.status).toBe('sleeping');

    const cancelled = await cancel({ origin: `http://${host}` });
    expect(cancelled.status).toBe(200);
    expect(JSON.parse(cancelled.body).run.status).toBe('cancelled');
    const rerun = await send('POST', `/v1/runs/${id}/rerun`, { origin: `http://${host}` });
    expect(rerun.status).toBe(201);
    expect(JSON.parse(rerun.body).run.id).not.toBe(id);
  });

  it('not on loopback, refuses them without the token even from the page', async () => {
    runner = await startTestRunner({ api: { host: '0.0.0.0', dashboardDir: fixture } });
    const id = await sleepingRun();
    const origin = `http://${new URL(runner.url).host}`;
    expect((await send('POST', `/v1/runs/${id}/cancel`, { origin })).status).toBe(401);
    expect((await send('POST', `/v1/runs/${id}/rerun`, { origin })).status).toBe(401);
    expect((await runner.store.listRuns({})).runs).toHaveLength(1);
    const withToken = await send('POST', `/v1/runs/${id}/cancel`, { origin, authorization: `Bearer ${runner.token}` });
    expect(withToken.status).toBe(200);
  });
});
