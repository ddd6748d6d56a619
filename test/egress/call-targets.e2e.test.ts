import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  closeServer,
  closeStarted,
  startApp,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  waitForRun,
} from '../helpers/runner.js';
import { startUpstashApp, type UpstashApp } from '../qstash/upstash-app.js';

/**
 * Finding 1 of issue 19 (SSRF with the answer read back): a token holder, or workflow code, made
 * the runner call an address inside its network that the operator never allowed, and read the
 * answer back through GET /v1/runs/:id. The "internal admin" here is a real HTTP server on
 * 127.0.0.2 (loopback, but not an allowed origin: the test runner allows http://127.0.0.1:*,
 * http://localhost:* and http://[::1]:*).
 */

let internal: Server | undefined;
let hits: string[] = [];
let apps: UpstashApp[] = [];

afterEach(async () => {
  await closeStarted();
  for (const app of apps) await app.close();
  apps = [];
  if (internal) await closeServer(internal);
  internal = undefined;
});

/** The internal admin endpoint the attacker wants to reach; records every request it gets. */
async function startInternalAdmin(): Promise<string> {
  hits = [];
  internal = createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"secret":"internal-admin-data"}');
  });
  await new Promise<void>((resolve, reject) => {
    internal!.once('error', reject);
    internal!.listen(0, '127.0.0.2', () => resolve());
  });
  return `http://127.0.0.2:${(internal.address() as AddressInfo).port}`;
}

describe('call targets go only to allowed origins or public addresses', () => {
  it('an Upstash toCallback publish to a private address outside the allowed origins is refused (403), and nothing is sent there', async () => {
    const target = await startInternalAdmin();
    // The app's origin only: `localhost` (which the default list allows) is then a name like any other.
    const runner = await startTestRunner({ runner: { allowedOrigins: ['http://127.0.0.1:*'] } });
    const app = await startUpstashApp(runner, {
      parked: {
        route: async (context) =>
          void (await context.waitForEvent('park', `park-${context.workflowRunId}`, { timeout: 3600 })),
      },
    });
    apps.push(app);
    const auth = { authorization: `Bearer ${runner.token}` };
    const started = await fetch(`${runner.url}/v2/publish/${app.url}/parked`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(started.status).toBe(201);
    const runId = await waitForOpenRun(runner.url, auth);

    const attack = await fetch(`${runner.url}/v2/publish/${target}/internal-admin`, {
      method: 'POST',
      headers: {
        ...auth,
        'upstash-workflow-runid': runId,
        'upstash-workflow-calltype': 'toCallback',
        'upstash-method': 'GET',
      },
    });
    expect(attack.status).toBe(403);
    expect(await attack.text()).toMatch(/127\.0\.0\.2.*not a public address/s);
    // A name that resolves to a private address is refused the same way (decided at publish by a lookup).
    const byName = await fetch(`${runner.url}/v2/publish/http://localhost:${new URL(target).port}/internal-admin`, {
      method: 'POST',
      headers: { ...auth, 'upstash-workflow-runid': runId, 'upstash-workflow-calltype': 'toCallback' },
    });
    expect(byName.status).toBe(403);

    // Nothing reached the internal server, and nothing of it can be read back.
    const detail = await (await fetch(`${runner.url}/v1/runs/${runId}`, { headers: auth })).text();
    expect(detail).not.toContain('internal-admin-data');
    expect(hits).toEqual([]);
  });

  it('a native context.call to a private address outside the allowed origins fails naming the rule, and is never sent', async () => {
    const target = await startInternalAdmin();
    const runner = await startTestRunner();
    const app = await startApp(
      async (context) => {
        await context.call('steal', { url: `${target}/internal-admin`, method: 'GET' });
      },
      { token: runner.token, runnerUrl: runner.url },
    );
    const runId = await startThroughApp(app.url);
    const { run, steps } = await waitForFinish(runner.runner, runId);
    expect(run.status).toBe('failed');
    const call = steps.find((s) => s.kind === 'call')!;
    expect(call.status).toBe('failed');
    expect(call.error?.message).toMatch(
      /refused to send a call request to http:\/\/127\.0\.0\.2:\d+.*not a public address.*Rule: a call goes to an origin the operator allowed/s,
    );
    expect(call.output ?? '').not.toContain('internal-admin-data');
    expect(hits).toEqual([]);
  });

  it('a call to an allowed origin on a private address still goes (the operator allowed it)', async () => {
    const target = await startInternalAdmin();
    const runner = await startTestRunner({ runner: { allowedOrigins: ['http://127.0.0.1:*', target] } });
    const app = await startApp(
      async (context) => {
        const answer = await context.call<{ secret: string }>('allowed', {
          url: `${target}/internal-admin`,
          method: 'GET',
        });
        return answer.body;
      },
      { token: runner.token, runnerUrl: runner.url },
    );
    const runId = await startThroughApp(app.url);
    const run = await waitForRun(runner.runner, runId, (r) => r.finishedAt !== null);
    expect(run.status).toBe('completed');
    expect(hits).toEqual(['GET /internal-admin']);
  });
});

async function waitForOpenRun(url: string, auth: Record<string, string>): Promise<string> {
  for (let i = 0; i < 400; i++) {
    const page = (await (await fetch(`${url}/v1/runs`, { headers: auth })).json()) as {
      runs: { id: string; status: string }[];
    };
    const open = page.runs.find((r) => r.status === 'waiting' || r.status === 'running');
    if (open) return open.id;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no open run appeared within 10 s');
}
