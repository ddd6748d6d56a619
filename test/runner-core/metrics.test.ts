import { describe, expect, it } from 'vitest';
import { Histogram, instrumentStore, renderMetrics } from '../../runner-core/telemetry/metrics.js';
import { Runner } from '../../runner-core/runner.js';
import { openSqliteStore } from '../../runner-core/store/sqlite/store.js';

describe('metrics', () => {
  it('keeps a cumulative histogram in Prometheus buckets', () => {
    const h = new Histogram([0.01, 0.1, 1]);
    for (const v of [0.005, 0.05, 0.05, 2]) h.observe(v);
    expect(h.lines('x')).toEqual([
      'x_bucket{le="0.01"} 1',
      'x_bucket{le="0.1"} 3',
      'x_bucket{le="1"} 3',
      'x_bucket{le="+Inf"} 4',
      'x_sum 2.105',
      'x_count 4',
    ]);
  });

  it('renders runs by status, queue depth, drives in flight and committed step durations', async () => {
    const stepDuration = new Histogram();
    const store = instrumentStore(openSqliteStore(':memory:'), stepDuration);
    const runner = new Runner({ store, tokens: ['t'] });
    const now = Date.now();
    const { run } = await store.createRun({
      id: 'wfr_00000000000000000000000001',
      url: 'http://127.0.0.1:9/',
      body: '{}',
      headers: {},
      retries: 0,
      retryDelayMs: 10,
      now,
    });
    await store.createRun({
      id: 'wfr_00000000000000000000000002',
      url: 'http://127.0.0.1:9/',
      body: '{}',
      headers: {},
      retries: 0,
      retryDelayMs: 10,
      now,
    });
    await store.apply([
      {
        type: 'step-succeeded',
        runId: run.id,
        index: 0,
        name: 'a',
        kind: 'run',
        output: null,
        at: now,
        durationMs: 40,
      },
      { type: 'run', runId: run.id, patch: { status: 'completed', finishedAt: now }, at: now },
    ]);
    const text = await renderMetrics({ runner, stepDuration, now: now + 1 });
    expect(text).toContain('# TYPE wfkit_runs gauge\nwfkit_runs{status="queued"} 1\nwfkit_runs{status="running"} 0');
    expect(text).toContain('wfkit_runs{status="completed"} 1');
    expect(text).toContain('# TYPE wfkit_queue_depth gauge\nwfkit_queue_depth 1\n');
    expect(text).toContain('# TYPE wfkit_drives_in_flight gauge\nwfkit_drives_in_flight 0\n');
    expect(text).toMatch(/# TYPE wfkit_store_size_bytes gauge\nwfkit_store_size_bytes [1-9]\d*\n/);
    expect(text).toContain('# TYPE wfkit_qstash_deliveries_in_flight gauge\nwfkit_qstash_deliveries_in_flight 0\n');
    expect(text).toContain('wfkit_step_duration_seconds_bucket{le="0.05"} 1\n');
    expect(text).toContain('wfkit_step_duration_seconds_bucket{le="0.025"} 0\n');
    expect(text).toMatch(/wfkit_step_duration_seconds_count 1\n$/);
    await runner.stop(0);
    await store.close();
  });

  it("hands a getter's value out as it is: a connection that is also a function keeps its methods", async () => {
    const store = openSqliteStore(':memory:');
    const pool = Object.assign(() => 'query', { begin: () => 'transaction' });
    Object.defineProperty(store, 'sql', { get: () => pool });
    const instrumented = instrumentStore(store, new Histogram()) as unknown as { sql: typeof pool };
    expect(instrumented.sql).toBe(pool);
    expect(instrumented.sql.begin()).toBe('transaction');
    await store.close();
  });
});
