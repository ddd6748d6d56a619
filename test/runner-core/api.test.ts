import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeValue } from '../../protocol/values.js';
import { newRunId } from '../../runner-core/ids.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Run, RunStatus } from '../../runner-core/store/types.js';
import {
  TEST_TOKEN,
  gate,
  startApp,
  startTestRunner,
  startThroughApp,
  unusedPort,
  waitForFinish,
  waitForRun,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';
import { requestApp } from '../helpers/api-app.js';

let runner: TestRunner | undefined;
let app: TestApp | undefined;
const dirs: string[] = [];

afterEach(async () => {
  await runner?.close();
  await app?.close();
  runner = undefined;
  app = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const auth = (token = TEST_TOKEN): Record<string, string> => ({ authorization: `Bearer ${token}` });

async function answer(response: Response): Promise<{ status: number; headers: Headers; body: any }> {
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** Calls the API app without a socket (routes, statuses, auth rules need none). */
async function call(path: string, init: RequestInit = {}): ReturnType<typeof answer> {
  return answer(await requestApp(runner!.app, path, init));
}

/** Calls the API over its socket: for what happens on the wire (declared lengths, streamed bodies). */
async function callSocket(path: string, init: RequestInit = {}): ReturnType<typeof answer> {
  return answer(await fetch(runner!.url + path, init));
}

function postInit(body: unknown, headers: Record<string, string>): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

function post(path: string, body: unknown, headers: Record<string, string> = auth()): ReturnType<typeof call> {
  return call(path, postInit(body, headers));
}

/**
 * A start request whose route refuses connections: the run waits for the app on the unreachable
 * schedule (tests that need it failed give the runner a short horizon). (Should another test bind
 * the port meanwhile, its app answers 404 for this path, which fails the run at once.)
 */
async function failingStart(extra: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  return { url: `http://127.0.0.1:${await unusedPort()}/unreachable`, body: '{}', headers: {}, retries: 0, ...extra };
}

describe('runner API: POST /v1/runs', () => {
  it('refuses a missing or wrong token with 401 and a JSON error, creating nothing', async () => {
    runner = await startTestRunner();
    const start = await failingStart();
    for (const headers of [{}, auth('wrong-token'), { authorization: TEST_TOKEN }]) {
      const response = await post('/v1/runs', start, headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(response.body).toEqual({
        error: { code: 'UNAUTHORIZED', message: expect.stringContaining('bearer token') },
      });
    }
    expect((await runner.store.listRuns({})).runs).toEqual([]);
  });

  it('answers malformed JSON with 400 naming it', async () => {
    runner = await startTestRunner();
    const response = await post('/v1/runs', '{"url": ');
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('BAD_REQUEST');
    expect(response.body.error.message).toMatch(/^Malformed JSON in the request body/);
  });

  it.each([
    [{ url: '/workflow' }, '`url`'],
    [{ url: 'ftp://example.com/workflow' }, '`url`'],
    [{}, '`url`'],
    [{ url: 'http://127.0.0.1:1/w', headers: { 'x-n': 1 } }, '`headers.x-n`'],
    [{ url: 'http://127.0.0.1:1/w', retries: -1 }, '`retries`'],
    [[1, 2], 'JSON object'],
  ])('answers a bad field with 400 naming it (%j)', async (body, field) => {
    runner = await startTestRunner();
    const response = await post('/v1/runs', body);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toContain(field);
    expect((await runner.store.listRuns({})).runs).toEqual([]);
  });

  it('answers a body over the cap with 413, declared or streamed', async () => {
    runner = await startTestRunner({ api: { maxBodyBytes: 1024 } });
    const big = JSON.stringify({ ...(await failingStart()), body: 'x'.repeat(2048) });
    const declared = await callSocket('/v1/runs', postInit(big, auth()));
    expect(declared.status).toBe(413);
    expect(declared.body.error.code).toBe('TOO_LARGE');
    // Without content-length the limit is found while reading; the 413 must still reach the client.
    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.slice(i, i + 256));
        controller.close();
      },
    });
    const streamed = await callSocket('/v1/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth() },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect((await runner.store.listRuns({})).runs).toEqual([]);
  });

  it('is idempotent by idempotencyKey: 201, then 200 with the same id', async () => {
    // Nothing listens at the start's URL: a short unreachable horizon fails the runs soon.
    runner = await startTestRunner({ runner: { unreachable: { baseMs: 20, capMs: 50, horizonMs: 100 } } });
    const start = await failingStart({ idempotencyKey: 'order-42' });
    const first = await post('/v1/runs', start);
    const second = await post('/v1/runs', start);
    expect(first.status).toBe(201);
    expect(second.status).toBe(200);
    expect(second.body.workflowRunId).toBe(first.body.workflowRunId);
    expect(first.body.workflowRunId).toMatch(/^wfr_[0-9A-HJKMNP-TV-Z]{26}$/);
    const other = await post('/v1/runs', { ...start, idempotencyKey: 'order-43' });
    expect(other.status).toBe(201);
    expect(other.body.workflowRunId).not.toBe(first.body.workflowRunId);
    await waitForRun(runner.runner, first.body.workflowRunId, (r) => r.status === 'failed');
    await waitForRun(runner.runner, other.body.workflowRunId, (r) => r.status === 'failed');
    expect((await runner.store.listRuns({})).runs).toHaveLength(2);
  });
});

describe('runner API: allowed origins', () => {
  it('refuses a start for an origin the operator did not allow: 403 ORIGIN_NOT_ALLOWED naming it and how to allow it, nothing created', async () => {
    runner = await startTestRunner({ runner: { allowedOrigins: ['https://app.example.com', 'http://127.0.0.1:*'] } });
    for (const url of [
      'http://169.254.169.254/latest/meta-data',
      'https://evil.example.com/wf',
      'http://localhost:3000/wf',
    ]) {
      const response = await post('/v1/runs', { url, body: '{}', headers: {} });
      expect(response.status, url).toBe(403);
      const origin = new URL(url).origin;
      expect(response.body).toEqual({
        error: { code: 'ORIGIN_NOT_ALLOWED', message: expect.stringContaining(`may not call ${origin}`) },
      });
      expect(response.body.error.message).toContain(`--allow-origin ${origin}`);
      expect(response.body.error.message).toContain(`WF_ALLOWED_ORIGINS=${origin}`);
      expect(response.body.error.message).toContain('https://app.example.com, http://127.0.0.1:*');
    }
    expect((await runner.store.listRuns({})).runs).toEqual([]);
    const allowed = await post('/v1/runs', await failingStart());
    expect(allowed.status).toBe(201);
  });

  it('without allowedOrigins a Runner calls loopback only', async () => {
    runner = await startTestRunner();
    expect((await post('/v1/runs', { url: 'https://app.example.com/wf', body: '{}', headers: {} })).status).toBe(403);
    expect((await post('/v1/runs', await failingStart())).status).toBe(201);
  });
});

describe('runner API: routing', () => {
  it('answers unknown and malformed run ids with 404', async () => {
    runner = await startTestRunner();
    const unknown = newRunId();
    for (const path of [`/v1/runs/${unknown}`, `/v1/runs/wfr_bad`, '/v1/runs/%ZZ', '/v1/runs/..%2F..%2Fetc']) {
      const response = await call(path);
      expect(response.status, path).toBe(404);
      expect(response.body.error.code).toBe('NOT_FOUND');
    }
    expect((await call(`/v1/runs/${unknown}`)).body.error.message).toContain(unknown);
    expect((await post(`/v1/runs/${unknown}/cancel`, {})).status).toBe(404);
    expect((await call(`/v1/runs/${unknown}/steps`, { headers: auth() })).status).toBe(404);
  });

  it('answers a wrong method with 405 and Allow, an unknown path with 404', async () => {
    runner = await startTestRunner();
    const collection = await call('/v1/runs', { method: 'DELETE', headers: auth() });
    expect(collection.status).toBe(405);
    expect(collection.headers.get('allow')).toBe('POST, GET');
    expect(collection.body.error.code).toBe('METHOD_NOT_ALLOWED');
    const cancel = await call(`/v1/runs/${newRunId()}/cancel`);
    expect(cancel.status).toBe(405);
    expect(cancel.headers.get('allow')).toBe('POST');
    const unknown = await call('/v3/anything'); // /v2 is the QStash API now (runner-core/qstash)
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.message).toContain('/v3/anything');
    expect((await call('/healthz')).body).toEqual({ ok: true });
  });

  it('requires the token for GET /v1/runs/:id/steps even on loopback', async () => {
    runner = await startTestRunner();
    const { workflowRunId } = (await post('/v1/runs', await failingStart())).body;
    expect((await call(`/v1/runs/${workflowRunId}`)).status).toBe(200);
    const open = await call(`/v1/runs/${workflowRunId}/steps`);
    expect(open.status).toBe(401);
    const authed = await call(`/v1/runs/${workflowRunId}/steps`, { headers: auth() });
    expect(authed).toMatchObject({ status: 200, body: { steps: [] } });
  });

  it('requires the token for reads when the server is not on loopback', async () => {
    // The host option sets policy only; the test server still binds 127.0.0.1.
    runner = await startTestRunner({ api: { host: '0.0.0.0' } });
    for (const path of ['/v1/runs', `/v1/runs/${newRunId()}`, '/v1/events']) {
      expect((await call(path)).status, path).toBe(401);
    }
    expect((await call('/v1/runs', { headers: auth() })).status).toBe(200);
  });

  it('requires the token for reads whose Host header is not loopback (DNS rebinding)', async () => {
    runner = await startTestRunner();
    const statusWithHost = async (host: string, headers: Record<string, string> = {}): Promise<number> =>
      (await call('/v1/runs', { headers: { host, ...headers } })).status;
    expect(await statusWithHost('evil.example:7766')).toBe(401);
    expect(await statusWithHost('evil.example:7766', auth())).toBe(200);
    for (const host of ['127.0.0.1:7766', 'localhost:7766', '[::1]:7766', 'localhost'])
      expect(await statusWithHost(host), host).toBe(200);
  });
});

describe('runner API: reads', () => {
  it('lists runs newest first, filters by status and pages with the cursor', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-api-'));
    dirs.push(dir);
    const dbPath = join(dir, 'runs.db');
    const seeded = openSqliteStore(dbPath);
    const statuses: RunStatus[] = [
      'completed',
      'failed',
      'completed',
      'cancelled',
      'completed',
      'failed',
      'completed',
      'completed',
    ];
    const ids: string[] = [];
    const t0 = Date.now() - 60_000;
    for (const [i, status] of statuses.entries()) {
      const id = newRunId(t0 + i);
      ids.push(id);
      await seeded.createRun({
        id,
        url: 'http://127.0.0.1:1/w',
        body: '{}',
        headers: {},
        retries: 0,
        retryDelayMs: 10,
        now: t0 + i,
      });
      await seeded.apply([{ type: 'run', runId: id, patch: { status, nextAt: null, finishedAt: t0 + i }, at: t0 + i }]);
    }
    await seeded.close();
    runner = await startTestRunner({ dbPath });

    const all = await call('/v1/runs');
    expect(all.body.runs.map((r: Run) => r.id)).toEqual([...ids].reverse());
    expect(all.body.nextCursor).toBeNull();

    const completed = ids.filter((_, i) => statuses[i] === 'completed').reverse();
    const paged: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const query: string = `/v1/runs?status=completed&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const { body } = await call(query);
      expect(body.runs.length).toBeLessThanOrEqual(2);
      for (const run of body.runs as Run[]) expect(run.status).toBe('completed');
      paged.push(...body.runs.map((r: Run) => r.id));
      cursor = body.nextCursor;
      if (cursor === null) break;
    }
    expect(paged).toEqual(completed);
    expect((await call('/v1/runs?status=cancelled')).body.runs.map((r: Run) => r.id)).toEqual([ids[3]]);

    const badStatus = await call('/v1/runs?status=done');
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.error.message).toContain('`status`');
    expect((await call('/v1/runs?limit=0')).status).toBe(400);
  });

  it('GET /v1/runs/:id returns the run, its steps and its attempts', async () => {
    runner = await startTestRunner();
    app = await startApp(async (context) => context.run('only', () => 'value'), {
      token: runner.token,
      runnerUrl: runner.url,
      retryDelay: 10,
    });
    const id = await startThroughApp(app.url, { n: 1 });
    await waitForFinish(runner.runner, id);
    const { status, body } = await call(`/v1/runs/${id}`);
    expect(status).toBe(200);
    expect(body.run).toMatchObject({
      id,
      status: 'completed',
      output: 'value',
      outputEncoded: encodeValue('value', 'only'),
      stepsDone: 1,
      body: '{"n":1}',
      url: app.url,
    });
    expect(body.steps).toMatchObject([
      {
        index: 0,
        name: 'only',
        status: 'succeeded',
        output: 'value',
        outputEncoded: encodeValue('value', 'only'),
        group: 1,
      },
    ]);
    expect(body.attempts).toMatchObject([{ seq: 1, responseStatus: 200, outcome: 'done' }]);
    expect(body.attempts[0].requestHeaders['wf-signature']).toBe('[redacted]');
  });

  it('cancels an unfinished run with 200, then answers 409', async () => {
    runner = await startTestRunner();
    app = await startApp(
      async (context) =>
        context.run('down', () => {
          throw new Error('down');
        }),
      { token: runner.token, runnerUrl: runner.url, retryDelay: 60_000 },
    );
    const id = await startThroughApp(app.url);
    // The first attempt fails and the run waits a minute for its retry.
    await waitForRun(runner.runner, id, (r) => r.attempts === 1 && r.status === 'running');
    const first = await post(`/v1/runs/${id}/cancel`, {});
    expect(first.status).toBe(200);
    expect(first.body.run).toMatchObject({ id, status: 'cancelled', nextAt: null });
    const again = await post(`/v1/runs/${id}/cancel`, {});
    expect(again.status).toBe(409);
    expect(again.body.error.message).toContain('cancelled');
    expect((await post(`/v1/runs/${id}/cancel`, {}, {})).status).toBe(401);
  });
});

interface SseEvent {
  event: string;
  data: any;
}

/** Reads server-sent events until `done` says so; every event seen is returned. */
async function readEvents(response: Response, done: (event: SseEvent) => boolean): Promise<SseEvent[]> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: SseEvent[] = [];
  let buffer = '';
  for (;;) {
    const { done: ended, value } = await reader.read();
    if (ended) throw new Error(`The event stream ended early after ${events.length} events.`);
    buffer += value;
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event === undefined || data === undefined) continue; // comments (": connected", ": ping")
      events.push({ event, data: JSON.parse(data) });
      if (done(events.at(-1)!)) {
        await reader.cancel();
        return events;
      }
    }
  }
}

describe('runner API: GET /v1/events', () => {
  it('streams the events of one run, up to its completion', async () => {
    runner = await startTestRunner();
    const hold = gate();
    app = await startApp(
      async (context) => {
        const a = await context.run('a', async () => {
          await hold.promise;
          return 1;
        });
        return context.run('b', () => a + 1);
      },
      { token: runner.token, runnerUrl: runner.url, retryDelay: 10 },
    );
    const id = await startThroughApp(app.url);
    const other = await startThroughApp(app.url);
    const controller = new AbortController();
    const response = await fetch(`${runner.url}/v1/events?runId=${id}&bodies=1`, { signal: controller.signal });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    try {
      const reading = readEvents(response, (e) => e.event === 'run' && e.data.run.status === 'completed');
      hold.open();
      const events = await reading;
      for (const e of events) {
        const runId = e.event === 'run' ? e.data.run.id : e.event === 'step' ? e.data.step.runId : e.data.attempt.runId;
        expect(runId).toBe(id);
      }
      const steps = events
        .filter((e) => e.event === 'step' && e.data.step.status === 'succeeded')
        .map((e) => e.data.step.name);
      expect(steps).toEqual(['a', 'b']);
      expect(events.some((e) => e.event === 'attempt' && e.data.attempt.outcome === 'done')).toBe(true);
      expect(events.at(-1)!.data.run).toMatchObject({
        id,
        status: 'completed',
        output: 2,
        outputEncoded: encodeValue(2, 'the workflow'),
        stepsDone: 2,
      });
    } finally {
      controller.abort();
    }
    await waitForFinish(runner.runner, other);
  });
});
