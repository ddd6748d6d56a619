import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@upstash/workflow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuiltCli, CLI, spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import { until, waitForRunView } from './runner-api.js';
import { describeUpstashFidelity } from './fidelity-scenarios.js';
import { describeUpstashFeatures, type UpstashHarness } from './scenarios.js';
import { describeUpstashWebhooks } from './scenarios-webhooks.js';
import { qstashToken } from '../../runner-core/qstash/qstash-token.js';
import { startUpstashApp, type UpstashApp } from './upstash-app.js';
import { unusedPort } from '../helpers/runner.js';

/**
 * The Upstash proof against `wf start` as production runs it: the built CLI in a child process, a
 * SQLite file, a strong token, the signing keys in its environment, and allowed origins limited to
 * the loopback apps. The Upstash app (Hono on Node) gets the same values under Upstash's own names.
 */

const TOKEN = `wf_${randomBytes(32).toString('hex')}`;
// Upstash's keys look like `sig_…`; any secret string works, the runner and the app only have to agree.
const CURRENT_KEY = `sig_${randomBytes(24).toString('base64url')}`;
const NEXT_KEY = `sig_${randomBytes(24).toString('base64url')}`;

let dir = '';
let runner: WfStartProcess | undefined;
const apps: UpstashApp[] = [];
let harness: UpstashHarness;

beforeAll(async () => {
  assertBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'wfkit-upstash-start-'));
  // A lower retry limit than the default (100): the flag is what the limits test reads back.
  runner = await spawnWfStart(
    ['--database', join(dir, 'runner.db'), '--upstash-max-retries', '50', '--upstash-max-message-size', '8mb'],
    {
      WF_TOKENS: TOKEN,
      WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*',
      QSTASH_CURRENT_SIGNING_KEY: CURRENT_KEY,
      QSTASH_NEXT_SIGNING_KEY: NEXT_KEY,
    },
  );
  // The app's token wrapped as QStash issues them (its SDK decodes it for webhooks); the Client's stays plain: both work.
  const base = { QSTASH_URL: runner.url, QSTASH_TOKEN: qstashToken(TOKEN) };
  const app = await startUpstashApp({
    ...base,
    QSTASH_CURRENT_SIGNING_KEY: CURRENT_KEY,
    QSTASH_NEXT_SIGNING_KEY: NEXT_KEY,
  });
  const openApp = await startUpstashApp(base);
  apps.push(app, openApp);
  harness = { runnerUrl: runner.url, token: TOKEN, app, openApp };
}, 60_000);

afterAll(async () => {
  await Promise.all(apps.splice(0).map((app) => app.stop()));
  if (runner?.running()) runner.child.kill('SIGTERM');
  await runner?.exited;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describeUpstashFeatures('wf start (SQLite)', () => harness);
describeUpstashFidelity('wf start (SQLite)', () => harness);
describeUpstashWebhooks('wf start (SQLite)', () => harness);

describe('wf start: the wf CLI on Upstash runs, unchanged', () => {
  /** `wf <args>` against this runner; resolves with its stdout (rejects on a non-zero exit). */
  const wf = async (...args: string[]): Promise<string> => {
    const env = { ...process.env, WF_RUNNER_URL: runner!.url, WF_TOKEN: TOKEN, NO_COLOR: '1' };
    return (await promisify(execFile)(process.execPath, [CLI, ...args], { cwd: dir, env, timeout: 20_000 })).stdout;
  };
  const client = (): Client => new Client({ baseUrl: harness.runnerUrl, token: TOKEN });
  const waiting = (eventId: string): Promise<true> =>
    until(`a waiter on ${eventId}`, async () =>
      (await client().getWaiters({ eventId })).length > 0 ? true : undefined,
    );

  it('wf notify wakes an Upstash run waiting for the event', async () => {
    const eventId = `cli-${randomUUID()}`;
    const { workflowRunId } = await client().trigger({ url: harness.app.workflowUrl('wait'), body: { eventId } });
    await waiting(eventId);
    await wf('notify', eventId, '--data', '{"by":"wf notify"}');
    const view = await waitForRunView(harness.runnerUrl, TOKEN, workflowRunId);
    expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
    expect(view.steps.find((s) => s.name === 'after-wait')?.output).toEqual({
      eventData: { by: 'wf notify' },
      timeout: false,
    });
    expect(await harness.app.countersOf(workflowRunId)).toEqual({ 'before-wait': 1, 'after-wait': 1 });
  });

  it('wf cancel cancels an Upstash run, which never runs its next step', async () => {
    const eventId = `cli-${randomUUID()}`;
    const { workflowRunId } = await client().trigger({ url: harness.app.workflowUrl('cancel'), body: { eventId } });
    await waiting(eventId);
    await wf('cancel', workflowRunId);
    const view = await waitForRunView(harness.runnerUrl, TOKEN, workflowRunId);
    expect(view.run.status).toBe('cancelled');
    expect(await client().getWaiters({ eventId })).toEqual([]);
    expect(await harness.app.countersOf(workflowRunId)).toEqual({ first: 1 });
  });

  it('wf logs prints an Upstash run step by step', async () => {
    const { workflowRunId } = await client().trigger({
      url: harness.app.workflowUrl('two-steps'),
      body: { text: 'wf logs' },
    });
    await waitForRunView(harness.runnerUrl, TOKEN, workflowRunId);
    const log = await wf('logs', workflowRunId);
    expect(log).toMatch(/upper/);
    expect(log).toMatch(/length/);
    expect(log).toMatch(/completed/);
    const lines = (await wf('logs', workflowRunId, '--json'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).toContain('WF LOGS');
  });
});

describe('wf start: the hardening guarantees hold for Upstash runs', () => {
  const client = (): Client => new Client({ baseUrl: harness.runnerUrl, token: TOKEN });

  it('a workflow URL outside the allowed origins is refused with 403 naming the setting', async () => {
    const response = await fetch(`${runner!.url}/v2/publish/https://not-allowed.example.com/workflows/two-steps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: '{}',
    });
    expect(response.status).toBe(403);
    expect(await response.text()).toContain('WF_ALLOWED_ORIGINS=https://not-allowed.example.com');
    // The SDK's Client gets the same refusal as an error, and no run is left behind.
    const error = await client()
      .trigger({ url: 'https://not-allowed.example.com/workflows/two-steps', workflowRunId: 'refused' })
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(error?.message).toContain('--allow-origin https://not-allowed.example.com');
    expect(
      (await fetch(`${runner!.url}/v1/runs/wfr_refused`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(404);
  });

  it('--upstash-max-retries sets the limit: one over it is 412 naming it, the limit itself is accepted', async () => {
    const publish = (retries: number) =>
      fetch(`${runner!.url}/v2/publish/${harness.app.workflowUrl('two-steps')}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'Upstash-Retries': String(retries) },
        body: '{"text":"limit"}',
      });
    const over = await publish(51);
    expect(over.status).toBe(412);
    expect(await over.text()).toContain('limit of 50 retries');
    expect((await publish(50)).status).toBe(201);
  });

  it('--upstash-max-message-size sets the largest body: 8 MiB is accepted, one byte more is 413', async () => {
    const publish = (bytes: number) =>
      fetch(`${runner!.url}/v2/publish/${harness.app.url}/counters`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'Upstash-Retries': '0' },
        body: 'x'.repeat(bytes),
      });
    expect((await publish(8 * 1024 * 1024 + 1)).status).toBe(413);
    expect((await publish(8 * 1024 * 1024)).status).toBe(201);
  });

  it('a forwarded credential reaches the app but is stored redacted', async () => {
    const secret = `Bearer s3cret-${randomUUID()}`;
    const { workflowRunId } = await client().trigger({
      url: harness.app.workflowUrl('headers'),
      headers: { authorization: secret },
    });
    const view = await waitForRunView(harness.runnerUrl, TOKEN, workflowRunId);
    expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
    // The app saw it, whole…
    expect(view.steps.find((s) => s.name === 'saw-header')?.output).toEqual({ bearer: true, length: secret.length });
    expect(await harness.app.countersOf(workflowRunId)).toEqual({ 'saw-header': 1 });
    // …but nothing the runner shows holds it: not the run, its steps, nor its attempts.
    const shown = JSON.stringify(view);
    expect(shown).not.toContain(secret.slice('Bearer '.length));
    expect(JSON.stringify(await client().logs({ filter: { workflowRunId } }))).not.toContain(
      secret.slice('Bearer '.length),
    );
  });

  it("key rotation: an app whose NEXT key is the runner's current one verifies; an app with other keys refuses every delivery", async () => {
    const other = (): string => `sig_${randomBytes(24).toString('base64url')}`;
    const base = { QSTASH_URL: runner!.url, QSTASH_TOKEN: TOKEN };
    // Mid-rotation: the app still has the old key as current and the runner's new one as next.
    const rotating = await startUpstashApp({
      ...base,
      QSTASH_CURRENT_SIGNING_KEY: other(),
      QSTASH_NEXT_SIGNING_KEY: CURRENT_KEY,
    });
    const stranger = await startUpstashApp({
      ...base,
      QSTASH_CURRENT_SIGNING_KEY: other(),
      QSTASH_NEXT_SIGNING_KEY: other(),
    });
    apps.push(rotating, stranger);
    const ok = await client().trigger({ url: rotating.workflowUrl('two-steps'), body: { text: 'rotated' } });
    const view = await waitForRunView(harness.runnerUrl, TOKEN, ok.workflowRunId, 20_000, rotating.output);
    expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
    expect(await rotating.countersOf(ok.workflowRunId)).toEqual({ upper: 1, length: 1 });
    const refused = await client().trigger({
      url: stranger.workflowUrl('two-steps'),
      body: { text: 'forged?' },
      retries: 0,
    });
    const failed = await waitForRunView(harness.runnerUrl, TOKEN, refused.workflowRunId, 20_000, stranger.output);
    expect(failed.run.status).toBe('failed');
    expect(stranger.output()).toMatch(/Failed to verify that the Workflow request comes from QStash/);
    expect(await stranger.countersOf(refused.workflowRunId)).toEqual({});
  });

  it('an app that is down is an outage, not a failure: the run waits for it, then completes (retries: 0)', async () => {
    const port = await unusedPort();
    const env = {
      QSTASH_URL: runner!.url,
      QSTASH_TOKEN: TOKEN,
      QSTASH_CURRENT_SIGNING_KEY: CURRENT_KEY,
      QSTASH_NEXT_SIGNING_KEY: NEXT_KEY,
    };
    const url = `http://127.0.0.1:${port}/workflows/two-steps`;
    // Nothing listens on the port yet: the first delivery cannot connect.
    const { workflowRunId } = await client().trigger({ url, body: { text: 'outage' }, retries: 0 });
    await new Promise((r) => setTimeout(r, 2_000));
    const during = await waitForRunView(harness.runnerUrl, TOKEN, workflowRunId, 1_000).catch(() => undefined);
    expect(during, 'the run ended while the app was down').toBeUndefined();
    const late = await startUpstashApp(env, port);
    apps.push(late);
    const view = await waitForRunView(harness.runnerUrl, TOKEN, workflowRunId, 30_000, late.output);
    expect(view.run.status, JSON.stringify(view.run.error)).toBe('completed');
    expect(await late.countersOf(workflowRunId)).toEqual({ upper: 1, length: 1 });
  });
});
