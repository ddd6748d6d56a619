import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startLocalRunner } from '../../cli/lib/local-runner.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { closeStarted, startApp, startThroughApp, waitForFinish } from '../helpers/runner.js';
import { CliError } from '../../cli/errors.js';
import type { CliIO } from '../../cli/lib/io.js';
import { otelFromFlags } from '../../cli/lib/runner-flags.js';
import { createProgram } from '../../cli/program.js';

/** `--otel-endpoint` on both runner commands, and the OTEL_* variables as the CLI reports them. */

function helpOf(command: string): Promise<string> {
  const out: string[] = [];
  const io: CliIO = {
    out: (line) => void out.push(line),
    err: () => {},
    env: {},
    cwd: tmpdir(),
    interrupted: () => new Promise(() => {}),
  };
  return createProgram(io)
    .exitOverride()
    .parseAsync([command, '--help'], { from: 'user' })
    .then(
      () => out.join('\n'),
      () => out.join('\n'),
    );
}

describe('--otel-endpoint', () => {
  it.each(['start', 'dev'])('is an option of wf %s', async (command) => {
    expect(await helpOf(command)).toMatch(/--otel-endpoint <url>\s+export OpenTelemetry traces/);
  });

  it('wins over the variables; without either, no telemetry', () => {
    expect(otelFromFlags({ allowOrigin: [] }, {})).toBeUndefined();
    expect(
      otelFromFlags(
        { allowOrigin: [], otelEndpoint: 'http://127.0.0.1:4318' },
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other:4318' },
      )?.endpoint,
    ).toBe('http://127.0.0.1:4318/v1/traces');
  });

  it('turns a wrong variable into a CliError (exit 2, BAD_ENV) naming it', () => {
    let error: unknown;
    try {
      otelFromFlags(
        { allowOrigin: [] },
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: '=x' },
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CliError);
    expect(error).toMatchObject({
      exitCode: 2,
      code: 'BAD_ENV',
      message: expect.stringContaining('OTEL_EXPORTER_OTLP_HEADERS'),
    });
  });
});

describe("wf dev's local runner", () => {
  it('exports traces when given an OTLP endpoint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wf-otel-dev-'));
    const receiver = await startOtlpReceiver();
    try {
      const local = await startLocalRunner({
        dbPath: join(dir, 'dev.db'),
        host: '127.0.0.1',
        port: 0,
        tokens: ['T'],
        otel: { endpoint: `${receiver.url}/v1/traces` },
      });
      const app = await startApp(async (context) => void (await context.run('hello', () => 1)), {
        token: 'T',
        runnerUrl: local.url,
      });
      const runId = await startThroughApp(app.url);
      expect((await waitForFinish(local.runner, runId)).run.status).toBe('completed');
      await local.close();
      expect(
        receiver.spans
          .filter((s) => s.attributes['wf.run_id'] === runId)
          .map((s) => s.name)
          .sort(),
      ).toEqual(['drive /workflow', 'run /workflow', 'step hello']);
    } finally {
      await closeStarted();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
