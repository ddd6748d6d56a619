import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../runner-core/telemetry/logger.js';
import { openQstashStores } from '../../runner-core/qstash/stores.js';
import { mountWaitRoutes } from '../../runner-core/qstash/waits/routes.js';
import { QstashWaits } from '../../runner-core/qstash/waits/service.js';
import { WaitTimeouts } from '../../runner-core/qstash/waits/timeouts.js';
import { openSqliteStore, type SqliteStore } from '../../runner-core/store/sqlite/store.js';
import type { Change } from '../../runner-core/store/types.js';
import { decodeValue } from '../../protocol/values.js';
import { closeStarted, startTestRunner } from '../helpers/runner.js';
import { newRun, T0 } from './store-fixtures.js';

/**
 * The wait/notify/waiters routes on a real SQLite store, called the hono way. The engine's
 * `appendRunStep` is recorded here (it is Q1's engine's job to deliver; what matters is what these
 * routes hand it) and can be made to fail, for the faults.
 */

const stores: SqliteStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await closeStarted();
});

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} } as unknown as Logger;

async function setup(options: { failFor?: string } = {}) {
  const store = openSqliteStore(':memory:');
  stores.push(store);
  const waitStore = openQstashStores(store.connection)!.waits;
  let clock = T0;
  const appended: { runId: string; step: Record<string, unknown> }[] = [];
  const engine = {
    async appendRunStep(runId: string, stepJson: string): Promise<string> {
      if (runId === options.failFor) throw new Error(`run ${runId} is finished`);
      appended.push({ runId, step: JSON.parse(stepJson) as Record<string, unknown> });
      return `msg_${appended.length}`;
    },
  };
  // The store's own apply stands in for the runner's commit queue (which group-commits and announces).
  const commit = async (changes: Change[]): Promise<void> => void (await store.apply(changes));
  const waits = new QstashWaits({ store, waitStore, engine, commit, logger: quiet, now: () => clock, keepMs: 60_000 });
  // Mounted as the engine's `/v2` sub-app mounts it: paths relative to /v2.
  const app = new Hono();
  mountWaitRoutes(app.basePath('/v2'), { waitStore, waits, logger: quiet });
  const run = async (n: number, status?: 'completed'): Promise<string> => {
    const { run } = await store.createRun(newRun(n));
    if (status) await store.apply([{ type: 'run', runId: run.id, patch: { status, finishedAt: T0 }, at: T0 }]);
    return run.id;
  };
  const request = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
    app.request(new Request(`http://runner${path}`, { method, body, headers }));
  const wait = (
    runId: string,
    eventId: string,
    step: Record<string, unknown> = { stepId: 2, stepName: 'approval', stepType: 'Wait', concurrent: 1 },
    timeout = '30s',
  ) =>
    request(
      'POST',
      `/v2/wait/${eventId}`,
      JSON.stringify({
        url: 'http://127.0.0.1:3000/wf',
        timeout,
        timeoutUrl: 'http://127.0.0.1:3000/wf',
        timeoutHeaders: { 'Upstash-Workflow-Runid': [runId] },
        step,
      }),
      { 'Upstash-Workflow-RunId': runId },
    );
  return {
    store,
    waitStore,
    app,
    appended,
    waits,
    run,
    request,
    wait,
    tick: (ms: number) => (clock += ms),
    now: () => clock,
  };
}

describe('POST /v2/wait/:eventId and POST /v2/notify/:eventId', () => {
  it('a notify delivers the event (base64) to the waiting run as its wait step, and answers the notified waiters', async () => {
    const t = await setup();
    const runId = await t.run(1);
    expect((await t.wait(runId, 'order-7')).status).toBe(200);
    expect(t.appended).toEqual([]);
    // The wait is a step of the run for the dashboards: waiting until its deadline, no native event id.
    expect(await t.store.listSteps(runId)).toMatchObject([
      { index: 2, name: 'approval', kind: 'wait', status: 'running', until: T0 + 30_000, eventId: null },
    ]);
    const waiters = await (await t.request('GET', '/v2/waiters/order-7')).json();
    expect(waiters).toEqual([
      {
        url: 'http://127.0.0.1:3000/wf',
        deadline: Math.floor((T0 + 30_000) / 1000),
        headers: { 'upstash-workflow-runid': [runId] },
        timeoutUrl: 'http://127.0.0.1:3000/wf',
        timeoutHeaders: { 'Upstash-Workflow-Runid': [runId] },
      },
    ]);
    const response = await t.request('POST', '/v2/notify/order-7', JSON.stringify({ approved: true }));
    expect(response.status).toBe(200);
    const notified = (await response.json()) as { messageId: string; error: string; waiter: { url: string } }[];
    expect(notified).toEqual([{ waiter: waiters[0], messageId: 'msg_1', error: '' }]);
    expect(t.appended).toEqual([
      {
        runId,
        step: {
          stepId: 2,
          stepName: 'approval',
          stepType: 'Wait',
          waitEventId: 'order-7',
          timeout: '30s',
          concurrent: 1,
          out: Buffer.from('{"approved":true}').toString('base64'),
          waitTimeout: false,
        },
      },
    ]);
    const [step] = await t.store.listSteps(runId);
    expect(step).toMatchObject({ index: 2, kind: 'wait', status: 'succeeded' });
    expect(decodeValue(step!.output!)).toEqual({ eventData: { approved: true }, timeout: false });
    // Taken: a second notify finds nobody, and the waiters list is empty.
    expect(await (await t.request('POST', '/v2/notify/order-7', 'again')).json()).toEqual([]);
    expect(await (await t.request('GET', '/v2/waiters/order-7')).json()).toEqual([]);
  });

  it('a notify without a run id before the wait is lost, as on QStash; with the run id it is kept for the wait (lookback)', async () => {
    const t = await setup();
    const runId = await t.run(1);
    expect(await (await t.request('POST', '/v2/notify/early', 'x')).json()).toEqual([]);
    expect(await (await t.request('POST', `/v2/notify/${runId}/early`, 'kept data')).json()).toEqual([]);
    const response = await t.wait(runId, 'early');
    expect(await response.json()).toEqual({ waiting: false, messageId: 'msg_1' });
    expect(t.appended[0]?.step).toMatchObject({
      waitEventId: 'early',
      out: Buffer.from('kept data').toString('base64'),
      waitTimeout: false,
    });
  });

  it('stores no credential: Authorization and forwarded credentials are redacted in what getWaiters shows', async () => {
    const t = await setup();
    const runId = await t.run(1);
    const body = {
      url: 'http://127.0.0.1:3000/wf',
      timeout: '30s',
      timeoutHeaders: {
        'Upstash-Workflow-Runid': [runId],
        Authorization: ['Bearer app-secret'],
        'Upstash-Forward-X-Api-Key': ['k-secret'],
        'X-Plain': ['visible'],
      },
      step: { stepId: 2, stepName: 'approval', stepType: 'Wait', concurrent: 1 },
    };
    await t.request('POST', '/v2/wait/secret', JSON.stringify(body), {
      'Upstash-Workflow-RunId': runId,
      'Upstash-Forward-Authorization': 'Bearer fwd-secret',
    });
    const [waiter] = (await (await t.request('GET', '/v2/waiters/secret')).json()) as {
      headers: Record<string, string[]>;
      timeoutHeaders: Record<string, string[]>;
    }[];
    expect(JSON.stringify(waiter)).not.toMatch(/secret/);
    expect(waiter!.headers['upstash-forward-authorization']).toEqual(['[redacted]']);
    expect(waiter!.timeoutHeaders).toMatchObject({
      Authorization: ['[redacted]'],
      'Upstash-Forward-X-Api-Key': ['[redacted]'],
      'X-Plain': ['visible'],
    });
  });

  it('the same wait posted again after it ended (a retried delivery) is not registered anew', async () => {
    const t = await setup();
    const runId = await t.run(1);
    await t.wait(runId, 'again');
    await t.request('POST', '/v2/notify/again', 'first');
    expect((await t.wait(runId, 'again')).status).toBe(200);
    expect(await (await t.request('GET', '/v2/waiters/again')).json()).toEqual([]);
    expect(await (await t.request('POST', '/v2/notify/again', 'second')).json()).toEqual([]);
    expect(t.appended).toHaveLength(1);
  });

  it('a wait inside Promise.all gets its result at its target step', async () => {
    const t = await setup();
    const runId = await t.run(1);
    await t.wait(runId, 'e', { stepId: 0, stepName: 'second', stepType: 'Wait', concurrent: 2, targetStep: 4 });
    await t.request('POST', '/v2/notify/e', '1');
    expect(t.appended[0]?.step).toMatchObject({ stepId: 4, stepName: 'second', concurrent: 2 });
  });

  it("a notify reaching a run that finished meanwhile reports it in that waiter's error, and the others still get the event", async () => {
    const t = await setup({ failFor: 'wfr_00000000000000000000000001' });
    await t.run(1);
    const other = await t.run(2);
    await t.wait('wfr_00000000000000000000000001', 'e');
    await t.wait(other, 'e');
    const notified = (await (await t.request('POST', '/v2/notify/e', 'd')).json()) as {
      error: string;
      messageId: string;
    }[];
    expect(notified.map((n) => n.error).sort()).toEqual(['', 'run wfr_00000000000000000000000001 is finished']);
    expect(t.appended.map((a) => a.runId)).toEqual([other]);
  });

  it('refuses what it cannot honour, naming the field, and never answers 5xx', async () => {
    const t = await setup();
    const runId = await t.run(1);
    const finished = await t.run(2, 'completed');
    const cases: [Response | Promise<Response>, number, RegExp][] = [
      [t.wait(runId, 'e', undefined, 'soon'), 400, /`timeout`/],
      [t.wait(runId, 'e', undefined, '400d'), 400, /365d/],
      [t.wait(runId, 'e', { stepName: 'x', stepType: 'Wait', concurrent: 1 }), 400, /step\.stepId/],
      [t.wait('wfr_unknown', 'e'), 404, /wfr_unknown/],
      [t.wait(finished, 'e'), 409, /completed/],
      [t.request('POST', '/v2/wait/e', '{not json', { 'Upstash-Workflow-RunId': runId }), 400, /JSON/],
      [
        t.request(
          'POST',
          '/v2/wait/e',
          JSON.stringify({ url: 'http://a/wf', timeout: '1m', step: { stepId: 1, stepName: 'a', stepType: 'Wait' } }),
        ),
        400,
        /Upstash-Workflow-RunId/,
      ],
      [
        t.request(
          'POST',
          '/v2/wait/e',
          JSON.stringify({
            url: 'http://a/wf',
            timeoutUrl: 'http://elsewhere/x',
            step: { stepId: 1, stepName: 'a', stepType: 'Wait' },
          }),
          { 'Upstash-Workflow-RunId': runId },
        ),
        400,
        /timeoutUrl/,
      ],
      [t.request('POST', `/v2/notify/${'x'.repeat(600)}`, 'd'), 400, /at most 512/],
      [t.request('POST', `/v2/notify/wfr_${'x'.repeat(600)}/e`, 'd'), 400, /workflow run id of at most 512/],
      [t.request('POST', '/v2/notify/e', 'x'.repeat(1024 * 1024 + 1)), 413, /limit/],
    ];
    for (const [pending, status, message] of cases) {
      const response = await pending;
      const text = await response.text();
      expect(response.status, text).toBe(status);
      expect(text).toMatch(message);
    }
  });
});

describe("odd input through the runner's own /v2 app", () => {
  it('answers 4xx, never 5xx, to malformed escapes, odd ids and odd bodies', async () => {
    const runner = await startTestRunner();
    const auth = { authorization: `Bearer ${runner.token}` };
    const cases: [string, string, string?][] = [
      ['POST', '/v2/notify/%E0%A4%A'],
      ['POST', '/v2/notify/wfr_x/%ZZ'],
      ['GET', '/v2/waiters/%'],
      ['POST', '/v2/wait/e', '[]'],
      ['POST', '/v2/wait/e', 'null'],
      [
        'POST',
        '/v2/wait/e',
        JSON.stringify({
          url: 'http://a',
          timeout: '1m',
          step: { stepId: 1, stepName: 'a', stepType: 'Wait' },
          timeoutHeaders: { x: [1] },
        }),
      ],
      ['POST', '/v2/wait/e', '{"a":'.repeat(200)],
      ['DELETE', '/v2/workflows/runs?count=abc'],
      ['DELETE', '/v2/workflows/runs?workflowRunIds=' + 'x'.repeat(5000)],
      ['GET', '/v2/workflows/events?groupBy=workflowRunId&cursor=%FF'],
      ['GET', '/v2/workflows/events?groupBy=workflowRunId&workflowRunId=nope'],
    ];
    for (const [method, path, body] of cases) {
      const response = await runner.app.request(
        new Request(`http://127.0.0.1${path}`, { method, headers: auth, body }),
      );
      expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBeLessThan(500);
    }
  });
});

describe('wait timeouts', () => {
  it('deliver waitTimeout: true once the deadline passed, once, and drop waits of finished runs', async () => {
    const t = await setup();
    const runId = await t.run(1);
    const finished = await t.run(2);
    await t.wait(runId, 'e');
    await t.wait(finished, 'e');
    await t.store.apply([{ type: 'run', runId: finished, patch: { status: 'cancelled', finishedAt: T0 }, at: T0 }]);
    const timeouts = new WaitTimeouts({
      store: t.store,
      waitStore: t.waitStore,
      waits: t.waits,
      logger: quiet,
      now: t.now,
    });
    expect(await timeouts.fireDue()).toBe(0);
    t.tick(30_000);
    expect(await timeouts.fireDue()).toBe(1);
    expect(t.appended).toEqual([
      {
        runId,
        step: {
          stepId: 2,
          stepName: 'approval',
          stepType: 'Wait',
          waitEventId: 'e',
          timeout: '30s',
          concurrent: 1,
          waitTimeout: true,
        },
      },
    ]);
    expect(await timeouts.fireDue()).toBe(0);
    expect(await t.waitStore.listWaits('e', 10)).toEqual([]);
    const [step] = await t.store.listSteps(runId);
    expect(step).toMatchObject({ kind: 'wait', status: 'succeeded' });
    expect(decodeValue(step!.output!)).toEqual({ eventData: undefined, timeout: true });
  });

  it('a failed delivery is tried again after the lease', async () => {
    const t = await setup({ failFor: 'wfr_00000000000000000000000001' });
    await t.run(1);
    await t.wait('wfr_00000000000000000000000001', 'e');
    const timeouts = new WaitTimeouts({
      store: t.store,
      waitStore: t.waitStore,
      waits: t.waits,
      logger: quiet,
      now: t.now,
      leaseMs: 5_000,
    });
    t.tick(30_000);
    expect(await timeouts.fireDue()).toBe(0);
    expect(await t.waitStore.claimTimedOut(t.now() + 1, 5_000, 10)).toEqual([]);
    expect((await t.waitStore.claimTimedOut(t.now() + 5_000, 5_000, 10)).map((w) => w.runId)).toEqual([
      'wfr_00000000000000000000000001',
    ]);
  });
});
