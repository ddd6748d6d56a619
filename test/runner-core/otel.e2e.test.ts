import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NonRetryableError } from '../../protocol/errors.js';
import { parseTraceparent, type TraceContext } from '../../protocol/trace-context.js';
import { childRunIdOf } from '../../runner-core/drive/invoke.js';
import { createRunner, type CreatedRunner } from '../../runner-core/create-runner.js';
import { RunnerConfigError } from '../../runner-core/errors.js';
import type { OtlpProtocol } from '../../runner-core/telemetry/otel-config.js';
import { runTraceIds } from '../../runner-core/telemetry/run-trace-ids.js';
import type { WorkflowContext } from '../../serve/core/context.js';
import {
  startOtlpReceiver,
  SpanKindCode,
  StatusCode,
  type OtlpReceiver,
  type ReceivedSpan,
} from '../helpers/otlp-receiver.js';
import type { Logger } from '../../runner-core/telemetry/logger.js';
import {
  closeServer,
  closeStarted,
  listen,
  startApp,
  startThroughApp,
  TEST_TOKEN,
  unusedPort,
  waitForFinish,
  waitForRun,
} from '../helpers/runner.js';

/**
 * The runner exports a run's trace over OTLP to a loopback receiver, in both protocols: a real
 * runner (createRunner, SQLite), a real app (serve on node:http), spans decoded as a collector would.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  await closeStarted();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function runnerExportingTo(
  receiver: Pick<OtlpReceiver, 'url'>,
  protocol: OtlpProtocol,
  logger?: Logger,
  database?: string,
): Promise<CreatedRunner> {
  const dir = mkdtempSync(join(tmpdir(), 'wfkit-otel-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const created = await createRunner({
    database: database ?? join(dir, 'runner.db'),
    tokens: [TEST_TOKEN],
    port: 0,
    otel: {
      endpoint: `${receiver.url}/v1/traces`,
      protocol,
      serviceName: 'orders-runner',
      headers: { 'x-collector-key': 'k1' },
    },
    ...(logger && { logger }),
  });
  let closed = false;
  cleanups.push(() => (closed ? undefined : created.close(0)));
  return {
    ...created,
    close: async (graceMs) => {
      closed = true;
      await created.close(graceMs);
    },
  };
}

/** What each drive request showed the workflow as `context.trace`, and each step's `fn` as `step.trace`. */
function orderWorkflow(
  seen: (TraceContext | undefined)[],
  seenByStep: Map<string, TraceContext | undefined> = new Map(),
) {
  let flakyCalls = 0;
  return async (context: WorkflowContext<{ fail?: boolean }>) => {
    seen.push(context.trace);
    await context.run('load', (step) => {
      seenByStep.set(step.name, step.trace);
      return 1;
    });
    await context.sleep('pause', '20ms');
    await context.run(
      'flaky',
      () => {
        if (++flakyCalls === 1) throw new Error('first try fails');
        return 2;
      },
      { retries: 1, retryDelay: 10 },
    );
    if (context.requestPayload?.fail) {
      await context.run('boom', () => {
        throw new NonRetryableError('boom failed for good');
      });
    }
    return 'ok';
  };
}

const byName = (spans: ReceivedSpan[], name: string): ReceivedSpan[] => spans.filter((s) => s.name === name);

describe.each<OtlpProtocol>(['http/protobuf', 'http/json'])('OpenTelemetry export over %s', (protocol) => {
  it('sends one trace per run: the run, each drive (an HTTP client span) and each step, with the wf.* attributes', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const runner = await runnerExportingTo(receiver, protocol);
    const seen: (TraceContext | undefined)[] = [];
    const seenByStep = new Map<string, TraceContext | undefined>();
    const app = await startApp(orderWorkflow(seen, seenByStep), { token: TEST_TOKEN, runnerUrl: runner.url });
    const runId = await startThroughApp(app.url, {});
    const { run, steps, attempts } = await waitForFinish(runner.runner, runId);
    expect(run.status).toBe('completed');
    // Closing flushes the batch: everything the run produced is at the receiver now.
    await runner.close(0);

    const expectedContentType = protocol === 'http/json' ? 'application/json' : 'application/x-protobuf';
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      expect(request.contentType).toContain(expectedContentType);
      expect(request.headers['x-collector-key']).toBe('k1');
    }
    const ids = runTraceIds(runId);
    const spans = receiver.spans.filter((s) => s.attributes['wf.run_id'] === runId);
    expect(spans.every((s) => s.traceId === ids.traceId && s.service === 'orders-runner')).toBe(true);

    // The run: a root span with the ids derived from the run id, from createdAt to the end.
    const [root, ...more] = byName(spans, 'run /workflow');
    expect(more).toEqual([]);
    expect(root).toMatchObject({
      spanId: ids.spanId,
      parentSpanId: '',
      kind: SpanKindCode.INTERNAL,
      status: { code: StatusCode.OK },
    });
    expect(root!.attributes).toMatchObject({
      'wf.run_id': runId,
      'wf.run.status': 'completed',
      'url.full': app.url,
      'wf.run.steps_done': 3,
      'wf.run.attempts': attempts.length,
    });
    expect(root!.startMs).toBe(Math.floor(run.createdAt));
    expect(root!.endMs).toBeGreaterThanOrEqual(root!.startMs);

    // Each drive request: a client span under the run, with the HTTP attributes of the request.
    const drives = byName(spans, 'drive /workflow');
    expect(drives).toHaveLength(attempts.length);
    for (const drive of drives) {
      expect(drive).toMatchObject({ parentSpanId: ids.spanId, kind: SpanKindCode.CLIENT });
      expect(drive.attributes).toMatchObject({
        'http.request.method': 'POST',
        'url.full': app.url,
        'server.address': '127.0.0.1',
        'http.response.status_code': 200,
      });
    }
    expect(drives.map((d) => d.attributes['wf.attempt.seq']).sort()).toEqual(attempts.map((a) => a.seq).sort());
    const failedDrive = drives.find((d) => d.attributes['wf.outcome'] === 'failed')!;
    expect(failedDrive.status.code).toBe(StatusCode.ERROR);
    expect(failedDrive.events.map((e) => e.name)).toContain('exception');

    // Each executed step: a span under the drive that ran it; the retried step shows once per try.
    const driveIds = new Set(drives.map((d) => d.spanId));
    const [load] = byName(spans, 'step load');
    expect(load!.attributes).toMatchObject({
      'wf.step.name': 'load',
      'wf.step.index': 0,
      'wf.step.kind': 'run',
      'wf.attempt': 1,
    });
    expect(driveIds.has(load!.parentSpanId)).toBe(true);
    const flaky = byName(spans, 'step flaky').sort(
      (a, b) => Number(a.attributes['wf.attempt']) - Number(b.attributes['wf.attempt']),
    );
    expect(flaky.map((s) => [s.attributes['wf.step.index'], s.attributes['wf.attempt'], s.status.code])).toEqual([
      [2, 1, StatusCode.ERROR],
      [2, 2, StatusCode.OK],
    ]);
    expect(flaky[0]!.parentSpanId).toBe(failedDrive.spanId);
    const exception = flaky[0]!.events.find((e) => e.name === 'exception')!;
    expect(exception.attributes).toMatchObject({ 'exception.message': 'first try fails', 'exception.type': 'Error' });
    // The sleep is resolved by the runner between drives: a span under the run, as long as the sleep.
    const [pause] = byName(spans, 'sleep pause');
    expect(pause).toMatchObject({ parentSpanId: ids.spanId });
    expect(pause!.attributes).toMatchObject({ 'wf.step.name': 'pause', 'wf.step.index': 1, 'wf.step.kind': 'sleep' });
    expect([pause!.startMs, pause!.endMs]).toEqual([
      Math.floor(steps[1]!.startedAt),
      Math.floor(steps[1]!.finishedAt!),
    ]);

    // The app saw each drive's own span as its trace context (the traceparent it was sent).
    expect(seen).toHaveLength(drives.length);
    for (const trace of seen) {
      expect(trace).toBeDefined();
      expect(trace!.traceId).toBe(ids.traceId);
      expect(driveIds.has(trace!.spanId)).toBe(true);
      expect(parseTraceparent(trace!.traceparent)).toEqual(trace);
    }
    expect(new Set(seen.map((t) => t!.spanId)).size).toBe(drives.length);
    // Inside a step, its fn was handed the step's own span, so the app's spans nest under the step.
    expect(seenByStep.get('load')).toEqual({
      traceId: ids.traceId,
      spanId: load!.spanId,
      sampled: true,
      traceparent: `00-${ids.traceId}-${load!.spanId}-01`,
    });
    // And the attempt log shows the header it was sent.
    expect(attempts.every((a) => parseTraceparent(a.requestHeaders.traceparent)?.traceId === ids.traceId)).toBe(true);
  });

  it('marks a run that fails: the failing step and the run carry error status and the exception', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const runner = await runnerExportingTo(receiver, protocol);
    const app = await startApp(orderWorkflow([]), {
      token: TEST_TOKEN,
      runnerUrl: runner.url,
      failureFunction: () => {},
    });
    const runId = await startThroughApp(app.url, { fail: true });
    const { run } = await waitForFinish(runner.runner, runId);
    expect(run.status).toBe('failed');
    await runner.close(0);

    const spans = receiver.spans.filter((s) => s.attributes['wf.run_id'] === runId);
    const [root] = byName(spans, 'run /workflow');
    expect(root).toMatchObject({ status: { code: StatusCode.ERROR, message: 'boom failed for good' } });
    expect(root!.attributes['wf.run.status']).toBe('failed');
    expect(root!.events.find((e) => e.name === 'exception')!.attributes).toMatchObject({
      'exception.type': 'NonRetryableError',
      'exception.message': 'boom failed for good',
    });
    const [boom, ...again] = byName(spans, 'step boom');
    expect(again).toEqual([]);
    expect(boom).toMatchObject({ status: { code: StatusCode.ERROR, message: 'boom failed for good' } });
    expect(boom!.attributes).toMatchObject({
      'wf.step.name': 'boom',
      'wf.step.index': 3,
      'error.type': 'NonRetryableError',
    });
    // The failureFunction's delivery is a drive of its own, under the run.
    const [delivery] = byName(spans, 'failure-function /workflow');
    expect(delivery).toMatchObject({
      parentSpanId: root!.spanId,
      kind: SpanKindCode.CLIENT,
      status: { code: StatusCode.UNSET },
    });
    expect(delivery!.attributes).toMatchObject({ 'wf.outcome': 'done', 'http.response.status_code': 200 });
  });
});

describe('OpenTelemetry export, beyond the happy path', () => {
  it("ends a cancelled run's span, with the wait it was in", async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const runner = await runnerExportingTo(receiver, 'http/protobuf');
    const app = await startApp(
      async (context) => {
        await context.waitForEvent('approval', 'order-1-approved', { timeout: '1h' });
      },
      { token: TEST_TOKEN, runnerUrl: runner.url },
    );
    const runId = await startThroughApp(app.url);
    await waitForRun(runner.runner, runId, (run) => run.status === 'waiting');
    await runner.runner.cancelRun(runId);
    await runner.close(0);
    const spans = receiver.spans.filter((s) => s.attributes['wf.run_id'] === runId);
    const [root] = byName(spans, 'run /workflow');
    expect(root!.attributes['wf.run.status']).toBe('cancelled');
    expect(root!.status.code).toBe(StatusCode.UNSET);
    const [wait] = byName(spans, 'wait approval');
    expect(wait).toMatchObject({ parentSpanId: runTraceIds(runId).spanId });
    expect(wait!.attributes).toMatchObject({ 'wf.step.kind': 'wait', 'wf.step.index': 0 });
  });

  it('gives a child run (context.invoke) its own trace, linked to its parent run, and the invoke a span', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const runner = await runnerExportingTo(receiver, 'http/json');
    const app = await startApp(
      async (context: WorkflowContext<{ child?: boolean }>) => {
        if (context.requestPayload?.child) return context.run('resize', () => 'small');
        const { body } = await context.invoke('make-thumbnail', { url: '/workflow', body: { child: true } });
        return body;
      },
      { token: TEST_TOKEN, runnerUrl: runner.url },
    );
    const parentId = await startThroughApp(app.url, {});
    const { run, steps } = await waitForFinish(runner.runner, parentId);
    expect(run.status).toBe('completed');
    const childId = childRunIdOf(steps[0]!)!;
    await runner.close(0);
    const parentIds = runTraceIds(parentId);
    const [childRoot] = receiver.spans.filter(
      (s) => s.name === 'run /workflow' && s.attributes['wf.run_id'] === childId,
    );
    expect(childRoot).toMatchObject({
      traceId: runTraceIds(childId).traceId,
      parentSpanId: '',
      links: [{ traceId: parentIds.traceId, spanId: parentIds.spanId, attributes: { 'wf.run_id': parentId } }],
    });
    expect(childRoot!.attributes['wf.parent_run_id']).toBe(parentId);
    const [invoke] = receiver.spans.filter((s) => s.name === 'invoke make-thumbnail');
    expect(invoke).toMatchObject({ traceId: parentIds.traceId, parentSpanId: parentIds.spanId });
    expect(receiver.spans.some((s) => s.name === 'step resize' && s.traceId === runTraceIds(childId).traceId)).toBe(
      true,
    );
  });

  it("sends a context.call's request with its call span's traceparent, unless the app set one", async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const seenByApi: (string | undefined)[] = [];
    const api = createServer((req, res) => {
      seenByApi.push(req.headers.traceparent as string | undefined);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const apiPort = await listen(api);
    cleanups.push(() => closeServer(api));
    const runner = await runnerExportingTo(receiver, 'http/protobuf');
    const own = '00-11111111111111111111111111111111-2222222222222222-01';
    const app = await startApp(
      async (context) => {
        await context.call('quote', { url: `http://127.0.0.1:${apiPort}/quote`, method: 'POST', body: { n: 1 } });
        await context.call('own-trace', { url: `http://127.0.0.1:${apiPort}/own`, headers: { TraceParent: own } });
      },
      { token: TEST_TOKEN, runnerUrl: runner.url },
    );
    const runId = await startThroughApp(app.url);
    expect((await waitForFinish(runner.runner, runId)).run.status).toBe('completed');
    await runner.close(0);
    const [quote] = receiver.spans.filter((s) => s.name === 'call quote' && s.attributes['wf.run_id'] === runId);
    expect(quote).toMatchObject({ parentSpanId: runTraceIds(runId).spanId, kind: SpanKindCode.CLIENT });
    expect(quote!.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.full': `http://127.0.0.1:${apiPort}/quote`,
      'wf.step.kind': 'call',
    });
    expect(seenByApi).toEqual([`00-${runTraceIds(runId).traceId}-${quote!.spanId}-01`, own]);
  });

  it('puts every drive of a run in its one trace across a runner restart', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-otel-restart-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const database = join(dir, 'runner.db');
    const first = await runnerExportingTo(receiver, 'http/protobuf', undefined, database);
    const app = await startApp(
      async (context) => {
        await context.run('before', () => 1);
        await context.sleep('nap', '300ms');
        await context.run('after', () => 2);
      },
      { token: TEST_TOKEN, runnerUrl: first.url },
    );
    const runId = await startThroughApp(app.url);
    await waitForRun(first.runner, runId, (run) => run.status === 'sleeping');
    await first.close(0);
    // The app still points at the first runner's URL; the second drives it from the store all the same.
    const second = await runnerExportingTo(receiver, 'http/protobuf', undefined, database);
    expect((await waitForFinish(second.runner, runId)).run.status).toBe('completed');
    await second.close(0);

    const ids = runTraceIds(runId);
    const spans = receiver.spans.filter((s) => s.attributes['wf.run_id'] === runId);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([ids.traceId]));
    expect(byName(spans, 'run /workflow').map((s) => s.spanId)).toEqual([ids.spanId]);
    const drives = byName(spans, 'drive /workflow');
    expect(drives.length).toBeGreaterThanOrEqual(2);
    expect(drives.every((d) => d.parentSpanId === ids.spanId)).toBe(true);
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(['step before', 'sleep nap', 'step after']));
  });

  it('keeps driving while the collector is down, says so once in the log, and says when it answers again', async () => {
    const lines: string[] = [];
    const record = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
    const logger: Logger = { info: record('info'), warn: record('warn'), error: record('error') };
    const port = await unusedPort();
    // Batches leave every 50 ms instead of 5 s and an export gives up (retries included) after 1 s
    // instead of 10 s, so both states show soon (the SDK reads these when the exporter is built).
    const tuning = { OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_EXPORTER_OTLP_TIMEOUT: '1000' };
    const previous = Object.fromEntries(Object.keys(tuning).map((name) => [name, process.env[name]]));
    Object.assign(process.env, tuning);
    let runner: CreatedRunner;
    try {
      runner = await runnerExportingTo({ url: `http://127.0.0.1:${port}` }, 'http/protobuf', logger);
    } finally {
      for (const [name, value] of Object.entries(previous)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    const app = await startApp(async (context) => void (await context.run('one', () => 1)), {
      token: TEST_TOKEN,
      runnerUrl: runner.url,
    });
    const first = await startThroughApp(app.url);
    expect((await waitForFinish(runner.runner, first)).run.status).toBe('completed');
    await vi.waitFor(
      () =>
        expect(lines.filter((l) => l.includes('failed'))).toEqual([
          expect.stringMatching(
            new RegExp(`^warn: tracing: exporting spans to http://127.0.0.1:${port}/v1/traces failed`),
          ),
        ]),
      { timeout: 10_000, interval: 20 },
    );

    const receiver = await startOtlpReceiver(port);
    cleanups.push(() => receiver.close());
    const second = await startThroughApp(app.url);
    expect((await waitForFinish(runner.runner, second)).run.status).toBe('completed');
    await vi.waitFor(
      () =>
        expect(receiver.spans.some((s) => s.attributes['wf.run_id'] === second && s.name === 'run /workflow')).toBe(
          true,
        ),
      { timeout: 10_000, interval: 20 },
    );
    // Said when the export's answer is back, which can come a moment after the receiver has the spans.
    await vi.waitFor(
      () => expect(lines).toContain(`info: tracing: exporting spans to http://127.0.0.1:${port}/v1/traces works again`),
      { timeout: 10_000, interval: 20 },
    );
    expect(lines.filter((l) => l.startsWith('warn'))).toHaveLength(1);
    await runner.close(0);
  });
});

describe('OpenTelemetry misconfigured', () => {
  it('refuses to start with a RunnerConfigError naming the endpoint', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-otel-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const failed = createRunner({
      database: join(dir, 'runner.db'),
      tokens: [TEST_TOKEN],
      port: 0,
      otel: { endpoint: 'not a url' },
    });
    await expect(failed).rejects.toThrow(RunnerConfigError);
    await expect(failed).rejects.toThrow(/OpenTelemetry export to not a url: .*not a url/);
  });
});

describe('OpenTelemetry off', () => {
  it('sends no traceparent and leaves context.trace undefined', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-otel-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const created = await createRunner({ database: join(dir, 'runner.db'), tokens: [TEST_TOKEN], port: 0 });
    cleanups.push(() => created.close(0));
    const seen: (TraceContext | undefined)[] = [];
    const app = await startApp(
      async (context) => {
        seen.push(context.trace);
        await context.run('only', () => 1);
      },
      { token: TEST_TOKEN, runnerUrl: created.url },
    );
    const runId = await startThroughApp(app.url);
    const { run, attempts } = await waitForFinish(created.runner, runId);
    expect(run.status).toBe('completed');
    expect(seen).toEqual([undefined]);
    expect(attempts.map((a) => a.requestHeaders.traceparent)).toEqual([undefined]);
  });
});
