import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccess } from '../../runner-core/api/access.js';
import { apiRoutes } from '../../runner-core/api/routes.js';
import type { EventStreams } from '../../runner-core/api/sse.js';
import { requestApp } from '../helpers/api-app.js';
import { closeStarted, startTestRunner } from '../helpers/runner.js';

/**
 * Finding 9 of issue 19: the routes `wf dev` (and `wf start --open-loopback`) opens to the
 * dashboard's own page without a token are exactly the ones README's security model names; and
 * the route table's access level is what the server does (every other write wants the token).
 */

afterEach(closeStarted);

/** The `METHOD /path` spans of README's "What loopback mode allows" paragraph. */
function readmeLoopbackRoutes(): string[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('**What loopback mode allows.**');
  expect(start).toBeGreaterThan(0);
  const paragraph = readme.slice(start, readme.indexOf('\n- **', start));
  return [...paragraph.matchAll(/`((?:GET|POST|DELETE) \/[^`]+)`/g)].map((m) => m[1]!);
}

describe('writes open to the dashboard on loopback', () => {
  it('are the routes README names, and only those answer the page without a token', async () => {
    const runner = await startTestRunner();
    const routes = apiRoutes({
      runner: runner.runner,
      access: createAccess({ host: '127.0.0.1', openOnLoopback: true }),
      streams: {} as EventStreams,
      maxBodyBytes: 1024,
      healthTimeoutMs: 1_000,
    });
    const open = routes
      .filter((route) => route.access === 'dashboard-write')
      .map((route) => `${route.method} ${route.path}`);
    expect(open.sort()).toEqual(readmeLoopbackRoutes().sort());

    const host = new URL(runner.url).host;
    for (const route of routes.filter((r) => r.access === 'dashboard-write' || r.access === 'token')) {
      const path = route.path.replace(
        ':id',
        route.path.startsWith('/v1/runs') ? 'wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B' : 'sch_none',
      );
      const response = await requestApp(runner.app, path, {
        method: route.method,
        headers: { host, origin: `http://${host}`, 'content-type': 'application/json' },
        ...(route.method !== 'GET' && { body: '{}' }),
      });
      const label = `${route.method} ${route.path}`;
      if (route.access === 'dashboard-write') expect(response.status, label).not.toBe(401);
      else expect(response.status, label).toBe(401);
    }
  });
});
