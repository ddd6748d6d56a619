import { describe, expect, it } from 'vitest';
import { makeStartCommand } from '../../cli/commands/start.js';
import { CliError } from '../../cli/errors.js';
import type { CliIO } from '../../cli/lib/io.js';
import { startProductionRunner } from '../../cli/lib/production-runner.js';
import { redactHeaderNames } from '../../cli/lib/redact-headers.js';

const io: CliIO = { out: () => {}, err: () => {}, env: {}, cwd: '.', interrupted: () => new Promise(() => {}) };

describe('--redact-header and WF_REDACT_HEADERS', () => {
  it('joins the repeated flag and the comma-separated variable, lower-cased, without duplicates', () => {
    expect(redactHeaderNames(['x-tenant'], { WF_REDACT_HEADERS: ' X-Session ,x-tenant,, x-sig' })).toEqual([
      'x-tenant',
      'x-session',
      'x-sig',
    ]);
    expect(redactHeaderNames(undefined, {})).toEqual([]);
  });

  it('rejects what is not a header name, saying where it came from', () => {
    expect(() => redactHeaderNames([], { WF_REDACT_HEADERS: 'x-ok, bad name' })).toThrow(CliError);
    expect(() => redactHeaderNames([], { WF_REDACT_HEADERS: 'x-ok, bad name' })).toThrow(
      'Expected WF_REDACT_HEADERS to be header names separated by commas, got "bad name"',
    );
    const command = makeStartCommand(io)
      .exitOverride()
      .configureOutput({ writeErr: () => {} });
    expect(() => command.parse(['--redact-header', 'a b'], { from: 'user' })).toThrow(
      'Expected an HTTP header name, got "a b".',
    );
  });

  it('wf start collects the flag, repeated', () => {
    const command = makeStartCommand(io).exitOverride();
    command.action(() => {});
    command.parse(['--redact-header', 'X-Tenant', '--redact-header', 'x-sig'], { from: 'user' });
    expect(command.opts().redactHeader).toEqual(['x-tenant', 'x-sig']);
  });

  it('reaches the runner: a start’s configured header is stored redacted', async () => {
    const started = await startProductionRunner({
      database: ':memory:',
      cwd: '.',
      host: '127.0.0.1',
      port: 0,
      tokens: ['t'],
      redactHeaders: ['x-tenant'],
      allowedOrigins: ['http://127.0.0.1:*'],
    });
    try {
      const { run } = await started.runner.startRun({
        url: 'http://127.0.0.1:9/wf',
        body: '',
        headers: { 'X-Tenant': 'secret', accept: '*/*' },
        delayMs: 60_000,
      });
      expect(run.headers).toEqual({ 'X-Tenant': '[redacted]', accept: '*/*' });
    } finally {
      await started.close(0);
    }
  });
});
