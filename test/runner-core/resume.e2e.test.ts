import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import { ClientError } from '../../api/errors.js';
import {
  closeStarted,
  Counter,
  startApp,
  startTestRunner,
  waitForFinish,
  waitForRun,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/** Resume from the failed step, and bulk actions: a real runner and a real app over real HTTP. */

let runner: TestRunner | undefined;
let app: TestApp | undefined;

afterEach(closeStarted);

/** A four-step workflow whose third step fails while `state.broken`; `counter` counts each step's executions app-side. */
async function setUp(state: { broken: boolean }, counter: Counter): Promise<{ client: Client; url: string }> {
  runner = await startTestRunner();
  app = await startApp(
    async (context) => {
      const a = await context.run('one', () => counter.hit('one'));
      const b = await context.run('two', () => counter.hit('two'));
      const c = await context.run('three', () => {
        counter.hit('three');
        if (state.broken) throw new Error('step three is broken');
        return a + b;
      });
      return context.run('four', () => counter.hit('four') + c);
    },
    { token: runner.token, runnerUrl: runner.url },
  );
  return { client: new Client({ runnerUrl: runner.url, token: runner.token }), url: app.url };
}

describe('resume', () => {
  it('starts a failed run again at the failed step: the steps before it do not run again', async () => {
    const state = { broken: true };
    const counter = new Counter();
    const { client, url } = await setUp(state, counter);
    const { workflowRunId: id } = await client.trigger({ url, retries: 0 });
    const failed = await waitForFinish(runner!.runner, id);
    expect(failed.run.status).toBe('failed');
    expect(failed.steps.map((s) => [s.name, s.status])).toEqual([
      ['one', 'succeeded'],
      ['two', 'succeeded'],
      ['three', 'failed'],
    ]);
    const keptExecutions = failed.steps.slice(0, 2).map((s) => s.reportedExecutions);

    state.broken = false;
    const resumed = await client.resume(id);
    expect(resumed).toMatchObject({ id, error: null, finishedAt: null });
    expect(['queued', 'running']).toContain(resumed.status);

    const done = await waitForFinish(runner!.runner, id);
    expect(done.run.status).toBe('completed');
    expect((await client.get(id)).run.output).toBe(3); // four (1) + three's a + b (1 + 1)
    expect([counter.of('one'), counter.of('two'), counter.of('three'), counter.of('four')]).toEqual([1, 1, 2, 1]);
    expect(done.steps.map((s) => [s.name, s.status])).toEqual([
      ['one', 'succeeded'],
      ['two', 'succeeded'],
      ['three', 'succeeded'],
      ['four', 'succeeded'],
    ]);
    expect(done.steps.slice(0, 2).map((s) => s.reportedExecutions)).toEqual(keptExecutions);
  });

  it('answers 409 NOT_RESUMABLE for a completed run and 404 for an unknown one', async () => {
    const counter = new Counter();
    const { client, url } = await setUp({ broken: false }, counter);
    const { workflowRunId: id } = await client.trigger({ url, retries: 0 });
    expect((await waitForFinish(runner!.runner, id)).run.status).toBe('completed');
    const refused = await client.resume(id).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ClientError);
    expect(refused).toMatchObject({ status: 409, apiCode: 'NOT_RESUMABLE' });
    expect((refused as Error).message).toContain('to be failed or cancelled');
    const unknown = await client.resume('wfr_00000000000000000000000000').catch((error: unknown) => error);
    expect(unknown).toMatchObject({ status: 404, apiCode: 'NOT_FOUND' });
  });
});

describe('bulk', () => {
  it('counts on a dry run, then resumes, cancels and reruns the runs a filter matches', async () => {
    const state = { broken: true };
    const counter = new Counter();
    const { client, url } = await setUp(state, counter);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.trigger({ url, retries: 0 })).workflowRunId);
    for (const id of ids) expect((await waitForFinish(runner!.runner, id)).run.status).toBe('failed');
    const afterFirst = (await runner!.store.getRun(ids[1]!))!.createdAt;

    // Dry run: counts, changes nothing.
    const dry = await client.bulk({ action: 'resume', filter: { status: 'failed', url }, dryRun: true });
    expect(dry).toEqual({ matched: 3, done: 0, failed: [], truncated: false });
    expect((await runner!.store.getRun(ids[0]!))!.status).toBe('failed');
    // Another URL matches nothing.
    expect((await client.bulk({ action: 'resume', filter: { url: `${url}-other` }, dryRun: true })).matched).toBe(0);
    // A time range: the runs created from the second on.
    expect(
      (await client.bulk({ action: 'resume', filter: { status: 'failed', createdAfter: afterFirst }, dryRun: true }))
        .matched,
    ).toBe(2);

    state.broken = false;
    const resumed = await client.bulk({ action: 'resume', filter: { status: 'failed', url } });
    expect(resumed).toEqual({ matched: 3, done: 3, failed: [], truncated: false });
    for (const id of ids) expect((await waitForFinish(runner!.runner, id)).run.status).toBe('completed');
    expect([counter.of('one'), counter.of('two'), counter.of('four')]).toEqual([3, 3, 3]);

    // Resume refuses completed runs, each reported with why.
    const refused = await client.bulk({ action: 'resume', filter: { url } });
    expect(refused.matched).toBe(3);
    expect(refused.done).toBe(0);
    expect(refused.failed.map((f) => f.code)).toEqual(['NOT_RESUMABLE', 'NOT_RESUMABLE', 'NOT_RESUMABLE']);

    // Rerun: new runs like the matched ones.
    const rerun = await client.bulk({ action: 'rerun', filter: { status: 'completed', url } });
    expect(rerun).toMatchObject({ matched: 3, done: 3 });
    const page = await client.list({ limit: 10 });
    expect(page.runs).toHaveLength(6);
    const fresh = page.runs.filter((r) => !ids.includes(r.id)).map((r) => r.id);
    for (const id of fresh) expect((await waitForFinish(runner!.runner, id)).run.status).toBe('completed');

    // Cancel: delayed runs are still queued, and only they are cancelled.
    const delayed: string[] = [];
    for (let i = 0; i < 2; i++) delayed.push((await client.trigger({ url, retries: 0, delay: '1h' })).workflowRunId);
    const cancelled = await client.bulk({ action: 'cancel', filter: { status: 'queued' } });
    expect(cancelled).toEqual({ matched: 2, done: 2, failed: [], truncated: false });
    for (const id of delayed) await waitForRun(runner!.runner, id, (r) => r.status === 'cancelled');

    // Cancelled runs resume too: from where they were (here, before any step).
    const back = await client.bulk({ action: 'resume', filter: { status: 'cancelled' } });
    expect(back).toMatchObject({ matched: 2, done: 2 });
    for (const id of delayed) expect((await waitForFinish(runner!.runner, id)).run.status).toBe('completed');
  });

  it('rejects an unknown action with 400 naming what it expected', async () => {
    runner = await startTestRunner();
    const client = new Client({ runnerUrl: runner.url, token: runner.token });
    const error = await client.bulk({ action: 'delete' as 'cancel', filter: {} }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, apiCode: 'BAD_REQUEST' });
    expect((error as Error).message).toContain('to be one of resume, cancel, rerun');
  });
});
