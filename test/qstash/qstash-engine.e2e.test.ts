import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@upstash/workflow';
import { closeStarted, startTestRunner, waitForFinish } from '../helpers/runner.js';
import { startUpstashApp, upstashEnv, type UpstashApp } from './upstash-app.js';

/**
 * The runner as QStash for a real, unchanged @upstash/workflow app (Hono on Node): runs start,
 * go step by step through `/v2/batch` and signed deliveries, and end as first-class runs of the
 * store with their steps. (The broad suites across frameworks live with the other proofs.)
 */

let apps: UpstashApp[] = [];
afterEach(async () => {
  await closeStarted();
  for (const app of apps) await app.close();
  apps = [];
});

const twoSteps = {
  route: async (context: any) => {
    const input = context.requestPayload as { n: number };
    const doubled = await context.run('double', async () => input.n * 2);
    const greeting = await context.run('greet', async () => `hello ${doubled}`);
    return { greeting };
  },
};

async function runIdFromList(url: string, token: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const page = (await (await fetch(`${url}/v1/runs`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      runs: { id: string }[];
    };
    if (page.runs.length > 0) return page.runs[0]!.id;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('no run appeared within 5 s');
}

describe('QStash engine with the real @upstash/workflow', () => {
  it('a two-step workflow started by publishing to /v2/publish/<app url> completes, with its steps stored', async () => {
    const runner = await startTestRunner();
    const app = await startUpstashApp(runner, { 'two-steps': twoSteps });
    apps.push(app);
    const stepEvents: string[] = [];
    runner.runner.events.subscribe(
      (event) => void (event.type === 'step' && stepEvents.push(`${event.step.name} ${event.step.status}`)),
    );
    const published = await fetch(`${runner.url}/v2/publish/${app.url}/two-steps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ n: 21 }),
    });
    expect(published.status).toBe(201);
    const runId = await runIdFromList(runner.url, runner.token);
    const { run, steps, attempts } = await waitForFinish(runner.runner, runId);
    expect(run).toMatchObject({ status: 'completed', protocol: 'upstash', url: `${app.url}/two-steps` });
    // The first delivery's own headers (its signature, connection headers), which the SDK forwards, are not the run's.
    expect(Object.keys(run.headers).filter((name) => /signature|message-id|content-length|^host$/.test(name))).toEqual(
      [],
    );
    expect(JSON.parse(run.output!)).toBeDefined();
    expect(steps.map((s) => [s.index, s.name, s.kind, s.status])).toEqual([
      [1, 'double', 'run', 'succeeded'],
      [2, 'greet', 'run', 'succeeded'],
    ]);
    // Through the API as the dashboards read it: the run with its steps' outputs as JSON.
    const detail = (await (
      await fetch(`${runner.url}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${runner.token}` } })
    ).json()) as {
      run: { output: unknown; protocol: string };
      steps: { name: string; output: unknown }[];
    };
    expect(detail.run).toMatchObject({ output: { greeting: 'hello 42' }, protocol: 'upstash' });
    expect(detail.steps.map((s) => s.output)).toEqual([42, 'hello 42']);
    // Every delivery of the run's messages is an attempt (the last one commits just after the run's end).
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    const all = await vi.waitFor(async () => {
      const list = await runner.store.listAttempts(runId);
      if (list.length < 3) throw new Error(`${list.length} attempts so far`);
      return list;
    });
    expect(all.map((a) => a.responseStatus)).toEqual([200, 200, 200]);
    expect(all[0]!.requestHeaders['upstash-signature']).toBe('[redacted]');
    // The dashboards hear of each step once (wf logs prints one line a step).
    expect(stepEvents).toEqual(['double succeeded', 'greet succeeded']);
  });

  it('Client.trigger starts a run under the given id; an unsigned direct POST is refused by the app', async () => {
    const runner = await startTestRunner();
    const app = await startUpstashApp(runner, { 'two-steps': twoSteps });
    apps.push(app);
    const env = upstashEnv(runner);
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId } = await client.trigger({
      url: `${app.url}/two-steps`,
      body: { n: 5 },
      workflowRunId: 'smoke-1',
    });
    expect(workflowRunId).toBe('wfr_smoke-1');
    const { run, steps } = await waitForFinish(runner.runner, workflowRunId);
    expect(run.status).toBe('completed');
    expect(steps.map((s) => s.name)).toEqual(['double', 'greet']);
    // The same id again is QStash's "already exists", not a second run.
    await client.trigger({ url: `${app.url}/two-steps`, body: { n: 5 }, workflowRunId: 'smoke-1' });
    const direct = await fetch(`${app.url}/two-steps`, { method: 'POST', body: '{"n":1}' });
    expect(direct.status).toBe(500);
    expect(await direct.text()).toContain('Upstash-Signature');
  });

  it('refuses a wrong token and an unsupported header, naming them', async () => {
    const runner = await startTestRunner();
    const noToken = await fetch(`${runner.url}/v2/batch`, { method: 'POST', body: '[]' });
    expect(noToken.status).toBe(401);
    const unsupported = await fetch(`${runner.url}/v2/publish/http://127.0.0.1:9/x`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}`, 'upstash-queue-name': 'q' },
      body: 'x',
    });
    expect(unsupported.status).toBe(400);
    expect(await unsupported.text()).toContain('upstash-queue-name');
    const unknownEndpoint = await fetch(`${runner.url}/v2/topics`, {
      headers: { authorization: `Bearer ${runner.token}` },
    });
    expect(unknownEndpoint.status).toBe(404);
    expect(await unknownEndpoint.text()).toContain('GET /v2/topics');
  });

  it('deduplicates a repeated Upstash-Deduplication-Id and delivers the message once', async () => {
    const runner = await startTestRunner();
    let received = 0;
    const app = await startUpstashApp(runner, {}, upstashEnv(runner), (hono) => {
      hono.post('/hook', (c) => ((received += 1), c.text('ok')));
    });
    apps.push(app);
    const publish = () =>
      fetch(`${runner.url}/v2/publish/${app.url}/hook`, {
        method: 'POST',
        headers: { authorization: `Bearer ${runner.token}`, 'upstash-deduplication-id': 'once' },
        body: 'x',
      }).then((r) => r.json() as Promise<{ messageId: string; deduplicated?: boolean }>);
    const first = await publish();
    const second = await publish();
    expect(second).toEqual({ messageId: first.messageId, url: `${app.url}/hook`, deduplicated: true });
    await vi.waitFor(() => expect(received).toBe(1));
    await new Promise((r) => setTimeout(r, 200));
    expect(received).toBe(1);
  });

  it('holds a message until Upstash-Not-Before and signs what it sends with Upstash-Retried', async () => {
    const runner = await startTestRunner();
    const seen: { at: number; retried: string | undefined; signature: string | undefined }[] = [];
    const app = await startUpstashApp(runner, {}, upstashEnv(runner), (hono) => {
      hono.post(
        '/later',
        (c) => (
          seen.push({
            at: Date.now(),
            retried: c.req.header('upstash-retried'),
            signature: c.req.header('upstash-signature'),
          }),
          c.text('ok')
        ),
      );
    });
    apps.push(app);
    const notBefore = Math.ceil(Date.now() / 1000) + 1;
    const published = await fetch(`${runner.url}/v2/publish/${app.url}/later`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}`, 'upstash-not-before': String(notBefore) },
      body: 'x',
    });
    expect(published.status).toBe(201);
    await vi.waitFor(() => expect(seen).toHaveLength(1), { timeout: 5_000 });
    expect(seen[0]!.at).toBeGreaterThanOrEqual(notBefore * 1000);
    expect(seen[0]!.retried).toBe('0');
    expect(seen[0]!.signature).toMatch(/^ey/);
  });

  it('forwards credential headers to the destination but stores them only sealed', async () => {
    const runner = await startTestRunner();
    const received: (string | undefined)[] = [];
    const app = await startUpstashApp(runner, {}, upstashEnv(runner), (hono) => {
      hono.post('/secure', (c) => (received.push(c.req.header('authorization')), c.text('ok')));
    });
    apps.push(app);
    const published = await fetch(`${runner.url}/v2/publish/${app.url}/secure`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}`, 'upstash-forward-authorization': 'Bearer app-secret-123' },
      body: 'x',
    });
    expect(published.status).toBe(201);
    await vi.waitFor(() => expect(received).toEqual(['Bearer app-secret-123']));
    const rows = runner.store.database.prepare('SELECT spec FROM qstash_messages').all() as { spec: string }[];
    expect(rows.length).toBe(1);
    expect(rows[0]!.spec).not.toContain('app-secret-123');
    expect(JSON.parse(rows[0]!.spec).headers.authorization).toBe('[redacted]');
  });
});
