import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alertOptions } from '../../cli/lib/alert-flags.js';
import { startLocalRunner } from '../../cli/lib/local-runner.js';
import type { CliIO } from '../../cli/lib/io.js';
import { createProgram } from '../../cli/program.js';

describe('alertOptions', () => {
  it('is off without a webhook, whatever else is set', () => {
    expect(alertOptions({}, {})).toBeUndefined();
    expect(
      alertOptions({ publicUrl: 'https://wf.example.com' }, { WF_ALERT_SECRET: 'x'.repeat(20), WF_ALERT_WEBHOOK: '' }),
    ).toBeUndefined();
  });

  it('takes the flags over the environment, and the secret from the environment only', () => {
    const env = {
      WF_ALERT_WEBHOOK: 'https://env.example.com/hook',
      WF_PUBLIC_URL: 'https://env.example.com',
      WF_ALERT_SECRET: 's'.repeat(20),
    };
    expect(alertOptions({}, env)).toEqual({
      webhookUrl: 'https://env.example.com/hook',
      publicUrl: 'https://env.example.com',
      secret: 's'.repeat(20),
    });
    expect(
      alertOptions({ alertWebhook: 'https://flag.example.com/hook', publicUrl: 'https://flag.example.com' }, env),
    ).toEqual({
      webhookUrl: 'https://flag.example.com/hook',
      publicUrl: 'https://flag.example.com',
      secret: 's'.repeat(20),
    });
  });
});

describe('wf dev --remote with alert flags', () => {
  it('refuses them: alerts are the remote runner’s own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wf-dev-remote-alert-'));
    const io: CliIO = {
      out: () => {},
      err: () => {},
      env: {},
      cwd: dir,
      interrupted: () => new Promise<void>(() => {}),
    };
    try {
      const args = [
        'dev',
        '--no-tui',
        '--no-app',
        '--remote',
        'http://127.0.0.1:9',
        '--token',
        'T',
        '--alert-webhook',
        'https://hooks.example.com/x',
      ];
      await expect(createProgram(io).exitOverride().parseAsync(args, { from: 'user' })).rejects.toMatchObject({
        code: 'BAD_FLAG',
        message: expect.stringContaining('with --remote, set them on the remote runner'),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("wf dev's runner with an alert webhook", () => {
  it('alerts to it, linking its own listen URL and signing with its token when nothing else is said', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wf-dev-alert-'));
    const local = await startLocalRunner({
      dbPath: join(dir, 'dev.db'),
      host: '127.0.0.1',
      port: 0,
      tokens: ['wf_dev_token_0123456789'],
      alerts: { webhookUrl: 'https://hooks.example.com/x' },
    });
    try {
      expect(local.runner.alerts).toMatchObject({ publicUrl: local.url, secret: 'wf_dev_token_0123456789' });
      expect(local.runner.alerts?.webhook.href).toBe('https://hooks.example.com/x');
    } finally {
      await local.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
