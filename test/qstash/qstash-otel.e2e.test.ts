import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@upstash/workflow';
import { afterEach, describe, expect, it } from 'vitest';
import { createRunner } from '../../runner-core/create-runner.js';
import { runTraceIds } from '../../runner-core/telemetry/run-trace-ids.js';
import { startOtlpReceiver, SpanKindCode, StatusCode, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { TEST_TOKEN, waitForFinish } from '../helpers/runner.js';
import { startUpstashApp, type UpstashApp } from './upstash-app.js';

/**
 * An Upstash run's trace over OTLP, as a native run's: a real runner (createRunner, SQLite) exporting
 * to a loopback receiver, a real @upstash/workflow app driving the run.
 */

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const byName = (spans: ReceivedSpan[], name: string): ReceivedSpan[] => spans.filter((s) => s.name === name);

describe('OpenTelemetry spans of an Upstash run', () => {
  it('the run, each delivery (a client span with its status), its steps, its sleep and its call', async () => {
    const receiver = await startOtlpReceiver();
    cleanups.push(() => receiver.close());
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-qstash-otel-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const runner = await createRunner({
      database: join(dir, 'runner.db'),
      tokens: [TEST_TOKEN],
      port: 0,
      otel: { endpoint: `${receiver.url}/v1/traces`, protocol: 'http/json' },
    });
    let closed = false;
    cleanups.push(() => (closed ? undefined : runner.close(0)));
    const keys = runner.runner.qstash!.signingKeys;
    const env = {
      QSTASH_URL: runner.url,
      QSTASH_TOKEN: TEST_TOKEN,
      QSTASH_CURRENT_SIGNING_KEY: keys.current,
      QSTASH_NEXT_SIGNING_KEY: keys.next,
    };
    let app: UpstashApp | undefined;
    const workflows = {
      traced: {
        route: async (context: any) => {
          const a = await context.run('first', async () => 1);
          await context.sleep('nap', 1);
          const answer = await context.call('ask', { url: `${app!.url}/echo`, method: 'POST', body: '{"q":1}' });
          return context.run('second', async () => a + answer.status);
        },
      },
    };
    // The runner is no TestRunner: the env is given, so the app never asks it for one.
    app = await startUpstashApp(undefined as never, workflows, env, (hono) =>
      hono.post('/echo', (c) => c.json({ ok: true })),
    );
    cleanups.push(() => app!.close());
    const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN });
    const { workflowRunId } = await client.trigger({ url: `${app.url}/traced`, body: {} });
    const { run, steps, attempts } = await waitForFinish(runner.runner, workflowRunId, 20_000);
    expect(run.status, JSON.stringify(run.error)).toBe('completed');
    // Closing flushes the batch: everything the run produced is at the receiver now.
    closed = true;
    await runner.close(0);

    const ids = runTraceIds(workflowRunId);
    const spans = receiver.spans.filter((s) => s.attributes['wf.run_id'] === workflowRunId);
    expect(spans.every((s) => s.traceId === ids.traceId)).toBe(true);
    const [root, ...more] = byName(spans, 'run /traced');
    expect(more).toEqual([]);
    expect(root).toMatchObject({ spanId: ids.spanId, parentSpanId: '', status: { code: StatusCode.OK } });

    // Every delivery the attempt log shows is a client span under the run, with the answer's status.
    const deliveries = spans.filter((s) => s.attributes['wf.qstash.message_id'] !== undefined);
    expect(deliveries.map((s) => s.attributes['wf.attempt.seq']).sort()).toEqual(attempts.map((a) => a.seq).sort());
    for (const span of deliveries) {
      expect(span).toMatchObject({ parentSpanId: ids.spanId, kind: SpanKindCode.CLIENT });
      expect(span.attributes).toMatchObject({
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'server.address': '127.0.0.1',
      });
      expect(span.attributes['wf.qstash.message_id']).toMatch(/^msg_/);
    }
    expect(byName(deliveries, 'drive /traced').length).toBeGreaterThanOrEqual(4);
    expect(byName(deliveries, 'call /echo')).toHaveLength(1);
    expect(deliveries.every((s) => /^(drive|call|callback) \//.test(s.name))).toBe(true);

    // Its steps, from the stored rows, under the run: as long as the rows say.
    for (const [name, kind] of [
      ['step first', 'run'],
      ['sleep nap', 'sleep'],
      ['call ask', 'call'],
      ['step second', 'run'],
    ] as const) {
      const [span] = byName(spans, name);
      expect(span, name).toMatchObject({ parentSpanId: ids.spanId });
      expect(span!.attributes).toMatchObject({ 'wf.step.kind': kind });
      const row = steps.find((s) => s.name === span!.attributes['wf.step.name'])!;
      expect([span!.startMs, span!.endMs]).toEqual([Math.floor(row.startedAt), Math.floor(row.finishedAt!)]);
    }
  });
});
