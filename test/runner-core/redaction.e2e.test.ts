import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';
import { startServer, type Endpoint } from '../helpers/endpoint.js';
import {
  startApp,
  startTestRunner,
  startThroughApp,
  unusedPort,
  waitForFinish,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/**
 * Credential headers never reach storage or any reader: a real app whose workflow makes a
 * `context.call` with Authorization, Cookie, X-Api-Key and a configured header, to a loopback
 * target that checks it got the real values and answers a Set-Cookie. The runner restarts while
 * the call is in flight; the resumed call still carries the credentials. Then no secret is in the
 * SQLite file's bytes, `GET /v1/runs/:id`, the SSE stream or `wf logs --json`.
 */

const SECRETS = {
  authorization: 'Bearer call-auth-7f3a',
  cookie: 'sid=call-cookie-91bc',
  'x-api-key': 'call-key-2d4e',
  'x-tenant': 'call-tenant-5a6b',
};
const ANSWER_COOKIE = 'session=answer-cookie-c0de';
const DRIVE_COOKIE = 'route=drive-cookie-beef';
const START_SECRETS = { authorization: 'Bearer start-auth-1234', 'x-tenant': 'start-tenant-5678' };
const RAW_START_COOKIE = 'raw=api-start-cookie-9999';
const ALL_SECRETS = [
  ...Object.values(SECRETS).map((v) => v.replace(/^Bearer /, '')),
  'answer-cookie-c0de',
  'drive-cookie-beef',
  'start-auth-1234',
  'start-tenant-5678',
  'api-start-cookie-9999',
];
const REDACT = ['X-Tenant'];

const dir = mkdtempSync(join(tmpdir(), 'wfkit-redaction-'));
const dbPath = join(dir, 'runner.db');
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Fails naming the first secret `text` holds; a served text must not hold the sealed values either. */
function leaks(where: string, text: string, served = true): void {
  for (const secret of ALL_SECRETS) expect(text.includes(secret), `${where} contains "${secret}"`).toBe(false);
  if (served) expect(text.includes('"sealed"'), `${where} serves the sealed credentials`).toBe(false);
}

/** Every SSE `data:` line the runner sends from now until `stop()`. */
async function followEvents(runner: TestRunner): Promise<{ text: () => string; stop: () => void }> {
  const controller = new AbortController();
  const response = await fetch(`${runner.url}/v1/events`, {
    headers: { authorization: `Bearer ${runner.token}` },
    signal: controller.signal,
  });
  expect(response.status).toBe(200);
  let text = '';
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) text += decoder.decode(chunk as Uint8Array, { stream: true });
  })().catch(() => {});
  return { text: () => text, stop: () => controller.abort() };
}

async function wfLogsJson(runner: TestRunner, runId: string): Promise<string> {
  const out: string[] = [];
  const io: CliIO = {
    out: (l) => void out.push(l),
    err: (l) => void out.push(l),
    env: { WF_RUNNER_URL: runner.url, WF_TOKEN: runner.token },
    cwd: dir,
    interrupted: () => new Promise(() => {}),
  };
  await createProgram(io)
    .exitOverride()
    .parseAsync(['logs', runId, '--json', '--runner', runner.url], { from: 'user' });
  return out.join('\n');
}

describe('credential headers are redacted before anything is stored or served', () => {
  it('stores and serves none of a call’s, an answer’s, a start’s or a drive’s credentials, and a call resumed after a restart still carries them', async () => {
    // The target: holds the first call (the runner restarts meanwhile), answers the second.
    const received: IncomingHttpHeaders[] = [];
    const held: ServerResponse[] = [];
    const target: Endpoint = await startServer((req, res) => {
      received.push(req.headers);
      req.resume();
      if (received.length === 1) return void held.push(res);
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ANSWER_COOKIE }).end('{"charged":true}');
    });
    closers.push(async () => {
      for (const res of held) res.destroy();
      await target.close();
    });

    let runner = await startTestRunner({ dbPath, runner: { redactHeaders: REDACT } });
    closers.push(() => runner.close());
    const port = await unusedPort();
    const app: TestApp = await startApp(
      async (context) => {
        const answer = await context.call<{ charged: boolean }>('charge', {
          url: `${target.url}/charge`,
          method: 'POST',
          headers: { ...SECRETS },
          body: { amount: 5 },
        });
        return context.run('after', () => ({ status: answer.status, cookie: answer.headers['set-cookie'] }));
      },
      {
        token: runner.token,
        runnerUrl: runner.url,
        port,
        baseUrl: `http://127.0.0.1:${port}`,
        // The route's own drive responses set a cookie too: the attempt log must not keep it.
        wrap: (handler) => (req, res) => (res.setHeader('set-cookie', DRIVE_COOKIE), handler(req, res)),
      },
    );
    closers.push(() => app.close());

    const events = await followEvents(runner);
    const id = await startThroughApp(app.url, { order: 1 }, START_SECRETS);
    await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 10_000 });
    for (const [name, value] of Object.entries(SECRETS)) expect(received[0]![name], name).toBe(value);

    // Restart: the first runner stops with the call in flight (its answer never comes).
    events.stop();
    await runner.close();
    runner = await startTestRunner({ dbPath, runner: { redactHeaders: REDACT } });
    closers.push(() => runner.close());
    const events2 = await followEvents(runner);

    const { run, steps } = await waitForFinish(runner.runner, id, 15_000);
    expect(run.status).toBe('completed');
    expect(received).toHaveLength(2);
    for (const [name, value] of Object.entries(SECRETS))
      expect(received[1]![name], `${name} after the restart`).toBe(value);
    // The workflow sees the answer as it was stored: its Set-Cookie redacted.
    expect(steps.find((s) => s.name === 'after')?.output).toContain('[redacted]');
    expect(run.headers).toMatchObject({ authorization: '[redacted]', 'x-tenant': '[redacted]' });

    // A client that calls the API itself with raw credential headers.
    const raw = await fetch(`${runner.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: app.url,
        body: '{}',
        headers: { cookie: RAW_START_COOKIE, 'X-Tenant': 'start-tenant-5678' },
      }),
    });
    const { workflowRunId: rawId } = (await raw.json()) as { workflowRunId: string };
    expect(raw.status, JSON.stringify(rawId)).toBeLessThan(300);
    await vi.waitFor(async () =>
      expect((await runner.store.getRun(rawId))?.headers).toMatchObject({
        cookie: '[redacted]',
        'X-Tenant': '[redacted]',
      }),
    );

    const shown = await (
      await fetch(`${runner.url}/v1/runs/${id}`, { headers: { authorization: `Bearer ${runner.token}` } })
    ).text();
    expect(shown).toContain('[redacted]');
    leaks('GET /v1/runs/:id', shown);
    await vi.waitFor(() => expect(events2.text()).toContain('"status":"completed"'));
    events2.stop();
    leaks('the SSE events', events.text() + events2.text());
    expect(events.text()).toContain('"kind":"call"');
    leaks('wf logs --json', await wfLogsJson(runner, id));

    await runner.close();
    const db = new Database(dbPath);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const bytes = ['', '-wal', '-shm']
      .map((suffix) => dbPath + suffix)
      .filter(existsSync)
      .map((path) => readFileSync(path).toString('latin1'))
      .join('');
    expect(bytes).toContain('[redacted]');
    leaks('the SQLite file', bytes, false);
  });
});
