import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { runTraceIds } from '../../runner-core/telemetry/run-trace-ids.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { closeStarted, startApp, startThroughApp, TEST_TOKEN } from '../helpers/runner.js';
import { assertBuiltCli, runWfStartToExit, spawnWfStart, type WfStartProcess } from './wf-start-process.js';

/**
 * `wf start` as operators run it (the built CLI in a child process): traces go to the collector the
 * standard variables or `--otel-endpoint` name, and without either no @opentelemetry module is ever
 * loaded (a resolve hook preloaded into the child reports every one).
 */

const HOOK = `--import=${pathToFileURL(resolve(import.meta.dirname, '../helpers/record-otel-loads.mjs')).href}`;
/** Cleared so the test machine's own OTEL_* variables cannot switch telemetry on. */
const NO_OTEL = {
  OTEL_EXPORTER_OTLP_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
  OTEL_EXPORTER_OTLP_PROTOCOL: '',
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: '',
  OTEL_EXPORTER_OTLP_HEADERS: '',
  OTEL_SDK_DISABLED: '',
};

let dir: string;
const processes: WfStartProcess[] = [];
const receivers: OtlpReceiver[] = [];

beforeAll(() => {
  assertBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'wfkit-otel-start-'));
});

afterEach(async () => {
  for (const p of processes.splice(0)) {
    if (p.running()) p.child.kill('SIGKILL');
    await p.exited;
  }
  await closeStarted();
  for (const receiver of receivers.splice(0)) await receiver.close();
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** `wf start` on its own SQLite file, runs one workflow through a real app to the end, then stops it (SIGTERM). */
async function runOneWorkflow(
  name: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ p: WfStartProcess; runId: string; traceparent: string | undefined }> {
  const p = await spawnWfStart(
    ['--database', join(dir, `${name}.db`), ...args],
    { WF_TOKEN: TEST_TOKEN, NODE_OPTIONS: HOOK, ...NO_OTEL, ...env },
    dir,
  );
  processes.push(p);
  let traceparent: string | undefined;
  const app = await startApp(
    async (context) => {
      traceparent = context.trace?.traceparent;
      await context.run('greet', () => 'hello');
    },
    { token: TEST_TOKEN, runnerUrl: p.url },
  );
  const runId = await startThroughApp(app.url);
  await vi.waitFor(
    async () => {
      const response = await fetch(`${p.url}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${TEST_TOKEN}` } });
      const { run } = (await response.json()) as { run: { status: string } };
      if (run.status !== 'completed') throw new Error(`run is ${run.status}`);
    },
    { timeout: 10_000, interval: 25 },
  );
  p.child.kill('SIGTERM');
  expect((await p.exited).code).toBe(0);
  return { p, runId, traceparent };
}

describe('wf start and OpenTelemetry', () => {
  it('without an endpoint loads no @opentelemetry module and sends no traceparent', async () => {
    const { p, traceparent } = await runOneWorkflow('off', [], {});
    expect(p.stderr()).toContain('[otel-hook] ready');
    expect(p.stderr()).not.toContain('[otel-hook] loaded');
    expect(traceparent).toBeUndefined();
  });

  it('exports to OTEL_EXPORTER_OTLP_ENDPOINT (http/protobuf by default) with OTEL_SERVICE_NAME and OTEL_EXPORTER_OTLP_HEADERS', async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const { p, runId, traceparent } = await runOneWorkflow('env', [], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: 'wf-start-under-test',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=secret%201',
    });
    expect(p.stderr()).toContain('[otel-hook] loaded @opentelemetry/exporter-trace-otlp-proto');
    expect(p.stderr()).not.toContain('@opentelemetry/exporter-trace-otlp-http');
    expect(p.stdout()).toMatch(new RegExp(`traces=${receiver.url}/v1/traces \\(http/protobuf\\)`));
    // SIGTERM flushed the batch before the process exited.
    const spans = receiver.spans.filter((s) => s.attributes['wf.run_id'] === runId);
    expect(spans.map((s) => s.name).sort()).toEqual(['drive /workflow', 'run /workflow', 'step greet']);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(['wf-start-under-test']));
    expect(
      receiver.requests.every(
        (r) => r.contentType === 'application/x-protobuf' && r.headers['x-api-key'] === 'secret 1',
      ),
    ).toBe(true);
    const drive = spans.find((s) => s.name === 'drive /workflow')!;
    expect(traceparent).toBe(`00-${runTraceIds(runId).traceId}-${drive.spanId}-01`);
  });

  it('exports to --otel-endpoint over http/json when OTEL_EXPORTER_OTLP_PROTOCOL says so', async () => {
    const receiver = await startOtlpReceiver();
    receivers.push(receiver);
    const { p, runId } = await runOneWorkflow('flag', ['--otel-endpoint', receiver.url], {
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    expect(p.stderr()).toContain('[otel-hook] loaded @opentelemetry/exporter-trace-otlp-http');
    const spans = receiver.spans.filter((s) => s.attributes['wf.run_id'] === runId);
    expect(spans.map((s) => s.name).sort()).toEqual(['drive /workflow', 'run /workflow', 'step greet']);
    expect(spans[0]!.service).toBe('wfkit-runner');
    expect(receiver.requests.every((r) => r.contentType.startsWith('application/json'))).toBe(true);
  });

  it('refuses a protocol it does not speak, naming the variable (exit 2)', async () => {
    const { code, stderr, stdout } = await runWfStartToExit(
      ['--port', '0'],
      {
        WF_TOKEN: TEST_TOKEN,
        ...NO_OTEL,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      },
      dir,
    );
    expect(code).toBe(2);
    expect(stderr + stdout).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL to be http\/protobuf or http\/json, got "grpc"/);
  });
});
