import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';
import { verifyAlertSignature } from '../../runner-core/alerts/signature.js';
import { startApp, waitForRun, type TestApp } from '../helpers/runner.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import {
  assertBuiltCli,
  runWfStartToExit,
  spawnWfStart,
  type WfStartProcess,
} from '../runner-core/wf-start-process.js';

/**
 * `wf start --alert-webhook` as operators run it (the built CLI in a child process, SQLite): the
 * failed run's alert reaches a loopback receiver, signed with WF_ALERT_SECRET and linking the
 * runner's dashboard; `wf logs` shows the delivery; bad alert settings stop the runner at start.
 */

const TOKEN = 'wf_alerts_cli_test_token_0123456789';
const SECRET = 'alerts-cli-secret-0123456789abcdef';

let dir: string;
let processes: WfStartProcess[] = [];
let apps: TestApp[] = [];
let hooks: WebhookReceiver[] = [];

beforeAll(() => {
  assertBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'wfkit-alerts-cli-'));
});
afterEach(async () => {
  for (const p of processes) if (p.running()) p.child.kill('SIGKILL');
  await Promise.all(processes.map((p) => p.exited));
  await Promise.all([...apps, ...hooks].map((x) => x.close()));
  processes = [];
  apps = [];
  hooks = [];
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function captureIO(): { io: CliIO; out: string[] } {
  const out: string[] = [];
  const io: CliIO = {
    out: (line) => void out.push(line),
    err: (line) => void out.push(line),
    env: {},
    cwd: dir,
    interrupted: () => new Promise(() => {}),
  };
  return { io, out };
}

describe('wf start --alert-webhook', () => {
  it('alerts a failed run, signed with WF_ALERT_SECRET and linking the dashboard; wf logs shows the delivery', async () => {
    const hook = await startWebhookReceiver(0, '/services/T0/B0/secret-path');
    hooks.push(hook);
    const runner = await spawnWfStart(['--database', join(dir, 'a.db'), '--alert-webhook', hook.url], {
      WF_TOKENS: TOKEN,
      WF_ALERT_SECRET: SECRET,
    });
    processes.push(runner);
    const app = await startApp(
      async (context) => {
        await context.run('charge', () => {
          throw new Error('card declined');
        });
      },
      { token: TOKEN, runnerUrl: runner.url, retries: 0 },
    );
    apps.push(app);
    const client = new Client({ runnerUrl: runner.url, token: TOKEN });
    const { workflowRunId: id } = await client.trigger({ url: app.url, retries: 0 });
    await waitForRun(await readerOf(client, id), id, (r) => r.alert === 'delivered');

    expect(hook.received).toHaveLength(1);
    const [hit] = hook.received;
    expect(verifyAlertSignature(hit!.body, hit!.headers['wf-alert-signature'] as string, SECRET)).toBe(true);
    // No --public-url: the link is where the runner listens.
    expect(JSON.parse(hit!.body)).toMatchObject({
      runId: id,
      dashboardUrl: `${runner.url}/runs/${id}`,
      error: { message: 'card declined' },
    });
    // The start line names the webhook's origin, never its path (a Slack webhook's path is its secret).
    expect(runner.stdout()).toContain(`alerting failed runs to http://127.0.0.1:${hook.port}`);
    expect(runner.stdout() + runner.stderr()).not.toContain('secret-path');

    const text = captureIO();
    await createProgram(text.io)
      .exitOverride()
      .parseAsync(['logs', id, '--runner', runner.url, '--token', TOKEN], { from: 'user' });
    const story = text.out.join('\n');
    expect(story).toMatch(/attempt \d+ · HTTP 200 · alert delivered/);
    expect(text.out.at(-1)).toMatch(/run failed · alert delivered \(1 attempt\) · /);
    expect(story).not.toContain('secret-path');
    const json = captureIO();
    await createProgram(json.io)
      .exitOverride()
      .parseAsync(['logs', id, '--runner', runner.url, '--token', TOKEN, '--json'], { from: 'user' });
    expect(JSON.parse(json.out.at(-1)!)).toMatchObject({ type: 'run', run: { alert: 'delivered', alertAttempts: 1 } });
  });

  it('refuses a webhook, public URL or secret it cannot use, naming the setting', async () => {
    const db = ['--port', '0', '--database', join(dir, 'b.db')];
    const flag = await runWfStartToExit(
      [...db, '--alert-webhook', 'ftp://example.com/hook'],
      { WF_TOKENS: TOKEN },
      dir,
    );
    expect(flag.code).not.toBe(0);
    expect(flag.stderr).toContain('Expected an http(s) URL, got "ftp://example.com/hook"');
    const publicUrl = await runWfStartToExit(
      db,
      { WF_TOKENS: TOKEN, WF_ALERT_WEBHOOK: 'https://example.com/hook', WF_PUBLIC_URL: 'wf.example.com' },
      dir,
    );
    expect(publicUrl.code).toBe(2);
    expect(publicUrl.stderr).toContain(
      'Expected the public URL (--public-url, WF_PUBLIC_URL) to be an http(s) URL, got "wf.example.com"',
    );
    const env = await runWfStartToExit(db, { WF_TOKENS: TOKEN, WF_ALERT_WEBHOOK: 'hooks.example.com' }, dir);
    expect(env.code).toBe(2);
    expect(env.stderr).toContain(
      'Expected the alert webhook (--alert-webhook, WF_ALERT_WEBHOOK) to be an http(s) URL, got "hooks.example.com"',
    );
    const secret = await runWfStartToExit(
      db,
      { WF_TOKENS: TOKEN, WF_ALERT_WEBHOOK: 'https://example.com/hook', WF_ALERT_SECRET: 'short' },
      dir,
    );
    expect(secret.code).toBe(2);
    expect(secret.stderr).toContain('WF_ALERT_SECRET');
    expect(secret.stderr).not.toContain('short');
  });
});

/** The run read through the API (the process owns the SQLite file): a `waitForRun` source. */
async function readerOf(client: Client, _id: string) {
  return { getRun: async (runId: string) => (await client.get(runId)).run } as unknown as Parameters<
    typeof waitForRun
  >[0];
}
