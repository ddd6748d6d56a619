import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../runner-core/store/postgres/store.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Workflow } from '../../serve/core/handler.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { Counter, gate, startApp, startThroughApp, unusedPort, waitForRun, type TestApp } from '../helpers/runner.js';
import { createLogger } from '../../cli/lib/logger.js';
import { START_MALLOC_TUNABLES, START_SEMI_SPACE_MB } from '../../cli/lib/young-generation.js';
import { leaseMsFromEnv, tokensFromEnv } from '../../cli/lib/start-env.js';
import {
  assertBuiltCli,
  CLI,
  runWfStartToExit,
  spawnWfStart,
  type WfStartProcess,
} from '../runner-core/wf-start-process.js';

/** `wf start` as operators run it: the built CLI in a child process, on SQLite and on PostgreSQL. */

// Random-looking, so they pass the strength check off loopback (`openssl rand -hex 32`).
const TOKEN = 'wf_3f9c1d7a5b2e8046c1f7d9a3b5e2c8047a1d6f3b9e5c2a8d4f7b1e6c3a9d5f2b';
const OLD_TOKEN = 'wf_8b2d6f1a9c4e7035b8d2f6a1c9e4b7d03f6a2c8e5b1d9f4a7c3e6b2d8f5a1c9e';

let dir: string;
let pg: PostgresCluster | undefined;
const processes: WfStartProcess[] = [];
const apps: TestApp[] = [];
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  assertBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'wfkit-start-'));
  pg = await startPostgres({ database: 'wf_start' });
}, 300_000);

afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.running()) p.child.kill('SIGKILL');
    await p.exited;
  }
  await Promise.all(apps.splice(0).map((app) => app.close()));
  await Promise.all(closers.splice(0).map((close) => close()));
});

afterAll(async () => {
  await pg?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function start(args: string[], env: Record<string, string> = { WF_TOKENS: TOKEN }): Promise<WfStartProcess> {
  const p = await spawnWfStart(args, env, dir);
  processes.push(p);
  return p;
}

async function get(url: string, token?: string): Promise<{ status: number; text: string; type: string | null }> {
  const response = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  return { status: response.status, text: await response.text(), type: response.headers.get('content-type') };
}

/** A workflow of two steps; `hold` keeps the first execution of step 0 open until opened. */
function twoSteps(calls: Counter, hold?: { started: () => void; until: Promise<void> }): Workflow<any, any> {
  return async (context) => {
    await context.run('first', async () => {
      if (calls.hit('first') === 1 && hold) {
        hold.started();
        await hold.until;
      }
      return 1;
    });
    await context.run('second', () => calls.hit('second'));
  };
}

describe('wf start: configuration', () => {
  it('reads several tokens from WF_TOKENS, current first, plus WF_TOKEN', () => {
    expect(tokensFromEnv({ WF_TOKENS: ' new,old\n older ,, ' })).toEqual(['new', 'old', 'older']);
    expect(tokensFromEnv({ WF_TOKENS: 'new old', WF_TOKEN: 'old' })).toEqual(['new', 'old']);
    expect(tokensFromEnv({ SERVICE_TOKEN: 'svc' })).toEqual(['svc']);
    expect(tokensFromEnv({})).toEqual([]);
    expect(leaseMsFromEnv({ WF_LEASE_MS: '2000' })).toBe(2000);
    expect(() => leaseMsFromEnv({ WF_LEASE_MS: '2s' })).toThrow(/WF_LEASE_MS/);
  });

  it('logs text for people and one JSON object per line for machines', () => {
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(`out ${l}`), err: (l: string) => lines.push(`err ${l}`) };
    const at = () => new Date(0);
    createLogger('text', io, at).info('listening on http://x', { store: 'sqlite', skipped: undefined });
    createLogger('text', io, at).warn('careful');
    createLogger('json', io, at).error('boom', { runId: 'wfr_1' });
    expect(lines).toEqual([
      'out wf start: listening on http://x (store=sqlite)',
      'err wf start: warn: careful',
      'err {"time":"1970-01-01T00:00:00.000Z","level":"error","msg":"boom","runId":"wfr_1"}',
    ]);
  });
});

describe('wf start: refusals', () => {
  it('refuses a non-loopback address without a token, and any address without one', async () => {
    const open = await runWfStartToExit(['--host', '0.0.0.0', '--port', '0'], {}, dir);
    expect(open.code).toBe(2);
    expect(open.stderr).toMatch(/Refusing to listen on 0\.0\.0\.0 without a token/);
    const none = await runWfStartToExit(['--port', '0'], {}, dir);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/needs a token/);
    const bad = await runWfStartToExit(['--port', '0', '--database', 'mysql://db/wf'], { WF_TOKEN: TOKEN }, dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Expected a PostgreSQL URL/);
  });

  it('refuses a weak token off loopback, naming which one and how to make a strong one, never printing it', async () => {
    const weak = await runWfStartToExit(['--host', '0.0.0.0', '--port', '0'], { WF_TOKENS: `${TOKEN} hunter2` }, dir);
    expect(weak.code).toBe(2);
    expect(weak.stderr).toMatch(
      /Refusing to listen on 0\.0\.0\.0 with a weak token: WF_TOKENS entry 2 has about \d+ bits of entropy, expected at least 128/,
    );
    expect(weak.stderr).toContain('openssl rand -hex 32');
    expect(weak.stderr + weak.stdout).not.toContain('hunter2');
    const single = await runWfStartToExit(['--host', '0.0.0.0', '--port', '0'], { WF_TOKEN: 'x' }, dir);
    expect(single.code).toBe(2);
    expect(single.stderr).toMatch(/WF_TOKEN has about 1 bits/);
  });
  it('refuses to start without allowed origins, saying what to set; refuses a malformed one naming it', async () => {
    const none = await runWfStartToExit(['--port', '0'], { WF_TOKEN: TOKEN, WF_ALLOWED_ORIGINS: '' }, dir);
    expect(none.code).toBe(2);
    expect(none.stderr.trim()).toBe(
      'wf: wf start needs the origins of the apps it may call: WF_ALLOWED_ORIGINS=https://app.example.com (several comma or space separated;' +
        ' https://*.example.com for subdomains, http://127.0.0.1:* for any port), or --allow-origin <pattern> (repeatable).',
    );
    const env = await runWfStartToExit(
      ['--port', '0'],
      { WF_TOKEN: TOKEN, WF_ALLOWED_ORIGINS: 'https://ok.example.com, app.example.com' },
      dir,
    );
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('WF_ALLOWED_ORIGINS: Expected an allowed origin like https://app.example.com');
    expect(env.stderr).toContain('got "app.example.com"');
    const flag = await runWfStartToExit(
      ['--port', '0', '--allow-origin', 'https://example.com/api'],
      { WF_TOKEN: TOKEN, WF_ALLOWED_ORIGINS: '' },
      dir,
    );
    expect(flag.code).not.toBe(0);
    expect(flag.stderr).toContain('got "https://example.com/api"');
    const horizon = await runWfStartToExit(['--port', '0', '--unreachable-horizon', 'soon'], { WF_TOKEN: TOKEN }, dir);
    expect(horizon.code).not.toBe(0);
    expect(horizon.stderr).toContain('Expected a duration like 30000 (ms), 90s, 30m or 24h, got "soon"');
  });
});

describe('wf start: where it sends requests, and for how long it waits', () => {
  it('starts runs only for allowed origins (403 naming the flag otherwise); --drive-timeout sets the signed deadline; an outage spends no retry', async () => {
    const runner = await start(
      [
        '--database',
        join(dir, 'origins', 'runner.db'),
        '--allow-origin',
        'https://app.example.com',
        '--drive-timeout',
        '2s',
      ],
      {
        WF_TOKENS: TOKEN,
        WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*',
      },
    );
    const post = (url: string) =>
      fetch(`${runner.url}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url, body: '{}', headers: {}, retries: 0 }),
      });
    const refused = await post('https://evil.example.com/wf');
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'ORIGIN_NOT_ALLOWED',
      message: expect.stringContaining(
        '--allow-origin https://evil.example.com or WF_ALLOWED_ORIGINS=https://evil.example.com',
      ),
    });
    expect(runner.stdout()).toContain('origins=https://app.example.com http://127.0.0.1:*');

    const started = await post(`http://127.0.0.1:${await unusedPort()}/workflow`);
    expect(started.status).toBe(201);
    const { workflowRunId: id } = (await started.json()) as { workflowRunId: string };
    const read = async () =>
      JSON.parse((await get(`${runner.url}/v1/runs/${id}`, TOKEN)).text) as {
        run: { status: string; unreachableSince: number | null; failures: number };
        attempts: { startedAt: number; requestHeaders: Record<string, string> }[];
      };
    await vi.waitFor(async () => expect((await read()).attempts.length).toBeGreaterThanOrEqual(2), {
      timeout: 10_000,
      interval: 50,
    });
    const { run, attempts } = await read();
    expect(run).toMatchObject({ status: 'running', failures: 0, unreachableSince: expect.any(Number) });
    for (const attempt of attempts)
      expect(Number(attempt.requestHeaders['wf-deadline']) - attempt.startedAt).toBe(2000);
  });
});

describe('wf start: who may read', () => {
  it("on loopback wants the token for reads, events and the page's cancel by default; --open-loopback opens them", async () => {
    const runner = await start(['--database', join(dir, 'auth', 'closed.db')], {
      WF_TOKENS: 'weak-is-fine-on-loopback',
    });
    const origin = new URL(runner.url).origin;
    for (const path of ['/v1/runs', '/v1/events', '/metrics']) {
      expect((await get(`${runner.url}${path}`)).status, path).toBe(401);
    }
    expect((await get(`${runner.url}/v1/runs`, 'weak-is-fine-on-loopback')).status).toBe(200);
    expect(JSON.parse((await get(`${runner.url}/v1/session`)).text)).toEqual({ needsToken: true });
    expect((await get(`${runner.url}/healthz`)).status).toBe(200);
    expect((await get(`${runner.url}/`)).status).toBe(200);
    const cancel = await fetch(`${runner.url}/v1/runs/wfr_01JD3W6J8Q7ZC0M5V4XK2N9T1B/cancel`, {
      method: 'POST',
      headers: { origin },
    });
    expect(cancel.status).toBe(401);
    runner.child.kill('SIGTERM');
    expect((await runner.exited).code).toBe(0);

    const open = await start(['--database', join(dir, 'auth', 'open.db'), '--open-loopback'], {
      WF_TOKENS: 'weak-is-fine-on-loopback',
    });
    expect((await get(`${open.url}/v1/runs`)).status).toBe(200);
    expect(JSON.parse((await get(`${open.url}/v1/session`)).text)).toEqual({ needsToken: false });
    open.child.kill('SIGTERM');
    expect((await open.exited).code).toBe(0);
  });
});

describe("wf start's young generation", () => {
  // /proc shows the command line the process runs now; process.execve is missing on Windows.
  it.runIf(process.platform === 'linux')(
    "re-executes itself in place with the semi-space flag and glibc's arena cap (same pid, SIGTERM and exit code as before); an operator-set size wins",
    async () => {
      const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const tunables = (pid: number) =>
        readFileSync(`/proc/${pid}/environ`, 'utf8')
          .split('\0')
          .find((entry) => entry.startsWith('GLIBC_TUNABLES='));
      const runner = await start(['--database', join(dir, 'young', 'capped.db')]);
      expect(cmdline(runner.child.pid!)).toContain(`--max-semi-space-size=${START_SEMI_SPACE_MB}`);
      expect(cmdline(runner.child.pid!)).toContain(CLI);
      expect(tunables(runner.child.pid!)).toBe(`GLIBC_TUNABLES=${START_MALLOC_TUNABLES}`);
      runner.child.kill('SIGTERM');
      expect(await runner.exited).toEqual({ code: 0, signal: null });

      const own = await start(['--database', join(dir, 'young', 'own.db')], {
        WF_TOKENS: TOKEN,
        NODE_OPTIONS: '--max-semi-space-size=16',
      });
      expect(cmdline(own.child.pid!).filter((arg) => arg.startsWith('--max-semi-space-size'))).toEqual([]);
      expect(tunables(own.child.pid!)).toBeUndefined();
      own.child.kill('SIGTERM');
      expect((await own.exited).code).toBe(0);
    },
  );
});

describe('wf start on SQLite', () => {
  it('drives runs, serves /healthz and /metrics, logs JSON lines, and releases in-flight work on SIGTERM', async () => {
    const dbPath = join(dir, 'sqlite', 'runner.db');
    const runner = await start(['--database', dbPath, '--log-format', 'json', '--grace-ms', '200']);
    const calls = new Counter();
    const held = gate();
    const holding = gate();
    const app = await startApp(twoSteps(calls, { started: holding.open, until: held.promise }), {
      token: TOKEN,
      runnerUrl: runner.url,
      retryDelay: 10,
    });
    apps.push(app);

    expect(JSON.parse((await get(`${runner.url}/healthz`)).text)).toEqual({ ok: true });
    // The web dashboard comes with the API server.
    expect((await get(`${runner.url}/`)).type).toMatch(/^text\/html/);
    const id = await startThroughApp(app.url);
    await holding.promise;
    const metrics = await get(`${runner.url}/metrics`, TOKEN);
    expect(metrics.status).toBe(200);
    expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metrics.text).toContain('wfkit_runs{status="running"} 1');
    expect(metrics.text).toContain('wfkit_drives_in_flight 1');
    expect(metrics.text).toMatch(/# TYPE wfkit_step_duration_seconds histogram\n/);
    expect(metrics.text).toMatch(/\nwfkit_queue_depth 0\n/);

    // SIGTERM mid-step: the drive gets its grace, then is aborted and its lease given back.
    runner.child.kill('SIGTERM');
    expect(await runner.exited).toEqual({ code: 0, signal: null });
    const lines = runner.jsonLines();
    expect(runner.otherLines()).toEqual([]);
    for (const line of lines)
      expect(line).toMatchObject({ time: expect.any(String), level: expect.any(String), msg: expect.any(String) });
    expect(lines.map((l) => l.msg)).toEqual([
      expect.stringMatching(/^listening on http/),
      expect.stringMatching(/^stopping/),
      'stopped',
    ]);
    expect(lines[0]).toMatchObject({ store: 'sqlite', database: dbPath, tokens: 1, runner: runner.owner });
    expect(lines[1]).toMatchObject({ inFlight: 1 });
    const db = new Database(dbPath, { readonly: true });
    expect(db.prepare('SELECT status, lease_owner FROM runs WHERE id = ?').get(id)).toEqual({
      status: 'running',
      lease_owner: null,
    });
    db.close();

    // The next runner on the file finishes the run: the held step runs again (at least once).
    const next = await start(['--database', dbPath]);
    const reader = openSqliteStore(dbPath);
    closers.push(() => reader.close());
    await waitForRun(reader, id, (r) => r.status === 'completed', 15_000);
    held.open();
    expect(calls.of('first')).toBe(2);
    expect(calls.of('second')).toBe(1);
    const after = await get(`${next.url}/metrics`, TOKEN);
    expect(after.text).toContain('wfkit_runs{status="completed"} 1');
    expect(after.text).toMatch(/\nwfkit_step_duration_seconds_count [1-9]/);
    next.child.kill('SIGTERM');
    expect((await next.exited).code).toBe(0);
  });
});

describe('wf start on PostgreSQL', () => {
  let reader: PostgresStore;
  beforeAll(async () => {
    reader = await openPostgresStore(pg!.url);
  });
  afterAll(async () => {
    await reader?.close();
  });

  it('on 0.0.0.0 takes either token of WF_TOKENS, and wants one for reads and /metrics', async () => {
    const runner = await start(['--host', '0.0.0.0', '--database', pg!.url], { WF_TOKENS: `${TOKEN}, ${OLD_TOKEN}` });
    // The listening URL names the bind address; talk to it over loopback.
    const url = runner.url.replace('0.0.0.0', '127.0.0.1');
    expect((await get(`${url}/healthz`)).status).toBe(200);
    for (const path of ['/v1/runs', '/metrics']) {
      expect((await get(`${url}${path}`)).status, path).toBe(401);
      expect((await get(`${url}${path}`, 'wf_wrong')).status, path).toBe(401);
      expect((await get(`${url}${path}`, TOKEN)).status, path).toBe(200);
      expect((await get(`${url}${path}`, OLD_TOKEN)).status, path).toBe(200);
    }
    // An app still on the previous token starts runs and verifies the drive requests' signatures.
    const calls = new Counter();
    const app = await startApp(twoSteps(calls), { token: OLD_TOKEN, runnerUrl: url, retryDelay: 10 });
    apps.push(app);
    const id = await startThroughApp(app.url);
    expect(await waitForRun(reader, id, (r) => r.finishedAt !== null, 15_000)).toMatchObject({
      status: 'completed',
      stepsDone: 2,
    });
    const metrics = (await get(`${url}/metrics`, TOKEN)).text;
    for (const name of ['wfkit_runs', 'wfkit_queue_depth', 'wfkit_drives_in_flight', 'wfkit_step_duration_seconds'])
      expect(metrics).toContain(`# TYPE ${name} `);
    runner.child.kill('SIGTERM');
    expect((await runner.exited).code).toBe(0);
    expect(runner.stdout()).toMatch(/^wf start: listening on http:\/\/0\.0\.0\.0:\d+ \(url=.*store=postgres/m);
  });

  it('on SIGTERM releases a run held mid-step, and another runner continues it at once', async () => {
    const first = await start(['--database', pg!.url, '--grace-ms', '300', '--log-format', 'json']);
    const second = await start(['--database', pg!.url]);
    const calls = new Counter();
    const held = gate();
    const holding = gate();
    const app = await startApp(twoSteps(calls, { started: holding.open, until: held.promise }), {
      token: TOKEN,
      runnerUrl: first.url,
      retryDelay: 10,
    });
    apps.push(app);
    const id = await startThroughApp(app.url);
    await holding.promise;
    const rows = await reader.query<{ lease_owner: string }[]>('SELECT lease_owner FROM runs WHERE id = $1', [id]);
    expect(rows[0]?.lease_owner).toBe(first.owner);

    const stoppedAt = Date.now();
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(first.jsonLines().find((l) => String(l.msg).startsWith('stopping'))).toMatchObject({
      inFlight: 1,
      graceMs: 300,
    });
    // Released, not left to expire: the default lease is 15 s, the other runner takes it within its poll.
    await waitForRun(reader, id, (r) => r.status === 'completed', 10_000);
    expect(Date.now() - stoppedAt).toBeLessThan(8_000);
    held.open();
    expect(calls.of('first')).toBe(2);
    expect(calls.of('second')).toBe(1);
    const attempts = await reader.listAttempts(id);
    expect(attempts.map((a) => a.outcome)).toEqual(['aborted', 'done']);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });
});
