import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import type { Workflow } from '../../serve/core/handler.js';
import {
  closeStarted,
  startApp,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/** Flow control end to end: the real `serve` route on node:http, the real Runner and API, a real SQLite file. */

let runner: TestRunner | undefined;
let app: TestApp | undefined;

afterEach(closeStarted);

/** Counts the workflow bodies executing at once, as the app sees them. */
class Concurrency {
  now = 0;
  max = 0;
  enter(): void {
    this.now += 1;
    this.max = Math.max(this.max, this.now);
  }
  leave(): void {
    this.now -= 1;
  }
}

describe('flow control e2e', () => {
  it('never runs more than `parallelism` runs of a key at once, and runs every one', async () => {
    const concurrency = new Concurrency();
    const workflow: Workflow<{ tenant: string; n: number }> = async (context) => {
      await context.run('work', async () => {
        concurrency.enter();
        // Long enough that ten runs would overlap if nothing held them back.
        await new Promise((resolve) => setTimeout(resolve, 60));
        concurrency.leave();
      });
      await context.sleep('pause', '10ms');
      return await context.run('done', () => context.requestPayload.n);
    };
    runner = await startTestRunner();
    app = await startApp(workflow, {
      token: runner.token,
      runnerUrl: runner.url,
      retryDelay: 10,
      flowControl: { key: (payload: { tenant: string }) => `tenant-${payload.tenant}`, parallelism: 2 },
    });
    // Listeners (the dashboards' event stream) are told live when a run starts waiting, and why.
    const announced: string[] = [];
    runner.runner.events.subscribe((event) => {
      if (event.type === 'run' && event.run.queuedReason !== undefined) announced.push(event.run.queuedReason);
    });
    const ids: string[] = [];
    for (let n = 0; n < 10; n++) ids.push(await startThroughApp(app.url, { tenant: '42', n }));
    // The runner API (through the one Client) says why the others wait.
    const client = new Client({ runnerUrl: runner.url, token: runner.token });
    let reasons: string[] = [];
    for (let i = 0; i < 200 && reasons.length === 0; i++) {
      reasons = (await client.list()).runs.flatMap((run) => (run.queuedReason === undefined ? [] : [run.queuedReason]));
      if (reasons.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(reasons[0]).toBe('flow control `tenant-42`: 2 of 2 running');
    expect((await client.get(ids[9]!)).run.flowKey).toBe('tenant-42');
    for (const id of ids) expect((await waitForFinish(runner.runner, id, 20_000)).run.status).toBe('completed');
    expect(concurrency.max).toBe(2);
    expect(announced).toContain('flow control `tenant-42`: 2 of 2 running');
  }, 30_000);

  it('starts at most `rate` runs of a key per period (client.trigger), none dropped', async () => {
    const starts: number[] = [];
    runner = await startTestRunner();
    app = await startApp(
      async (context) => {
        await context.run('first', () => {
          starts.push(Date.now());
        });
      },
      { token: runner.token, runnerUrl: runner.url, retryDelay: 10 },
    );
    const client = new Client({ runnerUrl: runner.url, token: runner.token });
    const ids: string[] = [];
    for (let n = 0; n < 7; n++) {
      ids.push(
        (await client.trigger({ url: app.url, body: { n }, flowControl: { key: 'api', rate: 3, period: '1s' } }))
          .workflowRunId,
      );
    }
    for (const id of ids) expect((await waitForFinish(runner.runner, id, 20_000)).run.status).toBe('completed');
    expect(starts).toHaveLength(7);
    // What the store guarantees: any four admissions (each run's first drive, stamped by the claim
    // that admitted it) span at least a period. The app's own step times add the scheduling jitter of
    // a busy machine between claim and step, so they are not what is asserted.
    const connection = runner.store.connection;
    if (connection?.kind !== 'sqlite') throw new Error('Expected the test runner on SQLite.');
    const admitted = connection.db
      .prepare(
        `SELECT flow_started_at FROM runs WHERE id IN (${ids.map(() => '?').join(',')}) ORDER BY flow_started_at`,
      )
      .pluck()
      .all(...ids) as number[];
    expect(admitted).toHaveLength(7);
    for (let i = 0; i + 3 < admitted.length; i++) expect(admitted[i + 3]! - admitted[i]!).toBeGreaterThanOrEqual(1000);
  }, 30_000);

  it("a rerun (the API's POST /v1/runs/:id/rerun) keeps the run's flow control key and limits", async () => {
    runner = await startTestRunner();
    app = await startApp(async (context) => context.run('first', () => 1), {
      token: runner.token,
      runnerUrl: runner.url,
      retryDelay: 10,
      flowControl: {
        key: (payload: { tenant: string }) => `tenant-${payload.tenant}`,
        parallelism: 2,
        rate: 5,
        period: '2s',
      },
    });
    const first = await startThroughApp(app.url, { tenant: '7' });
    expect((await waitForFinish(runner.runner, first, 20_000)).run.status).toBe('completed');
    const flowControl = { key: 'tenant-7', parallelism: 2, rate: 5, periodMs: 2000 };
    expect((await runner.store.getRun(first))!.flowControl).toEqual(flowControl);

    const client = new Client({ runnerUrl: runner.url, token: runner.token });
    const again = await client.rerun(first);
    // The API shows the key alone; the store keeps the limits the rerun was started with.
    expect(again.flowKey).toBe('tenant-7');
    expect(again).not.toHaveProperty('flowControl');
    expect((await runner.store.getRun(again.id))!.flowControl).toEqual(flowControl);
    expect((await waitForFinish(runner.runner, again.id, 20_000)).run.status).toBe('completed');
  }, 30_000);
});
