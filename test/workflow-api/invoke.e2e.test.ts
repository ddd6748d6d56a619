import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import { runStory } from '../../cli/lib/format.js';
import { NonRetryableError } from '../../protocol/errors.js';
import type { Workflow } from '../../serve/core/handler.js';
import { gate, startTestRunner, startThroughApp, waitForFinish, waitForRun } from '../helpers/runner.js';
import { api, useWorlds, value } from './world.js';

/**
 * `context.invoke` on a real runner (SQLite file, HTTP API) and real apps over HTTP: the child run
 * starts through the normal start path, the parent sleeps without a request open, the links show
 * in the API, cancelling a parent cancels its child, and a runner restart resumes the parent once.
 */

const worlds = useWorlds();

/** Parent and child in one route: the payload says which one this run is. */
const sameRoute: Workflow<{ child?: number }> = async (context) => {
  const n = context.requestPayload?.child;
  if (n !== undefined) return context.run('double', () => n * 2);
  // Relative to the parent's own URL: the same route, run as a child.
  const result = await context.invoke('child', { url: '/workflow', body: { child: 21 } });
  return context.run('after', () => ({ ...result, seen: true }));
};

describe('context.invoke', () => {
  it('runs a child of the same app, resumes the parent with { body, isFailed, isCanceled }, and links both ways', async () => {
    const { runner, app, openDrives } = await worlds.setup(sameRoute);
    const parentId = await startThroughApp(app.url);
    const { run, steps, attempts } = await waitForFinish(runner.runner, parentId);
    expect(run.status).toBe('completed');
    expect(value(run.output)).toEqual({ body: 42, isFailed: false, isCanceled: false, seen: true });
    expect(steps.map((s) => [s.kind, s.name, s.status])).toEqual([
      ['invoke', 'child', 'succeeded'],
      ['run', 'after', 'succeeded'],
    ]);
    // Suspended once, woken by the child's end: no drive held open meanwhile.
    expect(attempts.map((a) => a.outcome)).toEqual(['suspend', 'done']);
    expect(openDrives()).toBe(0);

    const parent = await api(runner, 'GET', `/v1/runs/${parentId}`);
    const childId = parent.body.steps[0].childRunId as string;
    expect(childId).toMatch(/^wfr_/);
    const child = await api(runner, 'GET', `/v1/runs/${childId}`);
    expect(child.body.run).toMatchObject({
      status: 'completed',
      output: 42,
      parentRunId: parentId,
      parentStepIndex: 0,
      idempotencyKey: `invoke:${parentId}:0`,
    });
    expect(child.body.run.body).toBe('{"child":21}');
    expect((await runner.store.listRuns({})).runs).toHaveLength(2);

    // Through the Client, as `wf logs` prints them: each run names the other.
    const client = new Client({ runnerUrl: runner.url, token: runner.token });
    const childDetail = await client.get(childId);
    expect(childDetail.run).toMatchObject({ parentRunId: parentId, parentStepIndex: 0 });
    expect(runStory(childDetail.run, childDetail.steps, childDetail.attempts).at(-1)).toContain(
      `child of ${parentId} step 0`,
    );
    const parentDetail = await client.get(parentId);
    expect(runStory(parentDetail.run, parentDetail.steps, parentDetail.attempts).join('\n')).toContain(
      `step 0 invoke child succeeded`,
    );
    expect(parentDetail.steps[0]!.childRunId).toBe(childId);
  });

  it("starts the child under the invoke's flow control: children of two parents never overlap, both parents complete", async () => {
    let now = 0;
    let max = 0;
    const { runner, app } = await worlds.setup(async (context) => {
      const payload = context.requestPayload as { child?: number; parent?: number };
      if (payload.child !== undefined) {
        return context.run('work', async () => {
          now += 1;
          max = Math.max(max, now);
          // Long enough that two children would overlap if nothing held one back.
          await new Promise((resolve) => setTimeout(resolve, 150));
          now -= 1;
          return payload.child! * 2;
        });
      }
      const result = await context.invoke<number>('child', {
        url: '/workflow',
        body: { child: payload.parent! },
        flowControl: { key: 'k', parallelism: 1 },
      });
      return result.body;
    });
    const parents = [await startThroughApp(app.url, { parent: 1 }), await startThroughApp(app.url, { parent: 2 })];
    const runs = await Promise.all(parents.map((id) => waitForFinish(runner.runner, id, 20_000)));
    expect(runs.map(({ run }) => [run.status, value(run.output)])).toEqual([
      ['completed', 2],
      ['completed', 4],
    ]);
    expect(max).toBe(1);
    for (const id of parents) {
      const step = (await runner.store.listSteps(id))[0]!;
      // Stored on the parent's step, resolved; the child was started under it.
      expect(step.request).toMatchObject({ flowControl: { key: 'k', parallelism: 1 } });
      const childId = (await api(runner, 'GET', `/v1/runs/${id}`)).body.steps[0].childRunId as string;
      expect((await runner.store.getRun(childId))!.flowControl).toEqual({ key: 'k', parallelism: 1 });
      expect((await api(runner, 'GET', `/v1/runs/${childId}`)).body.run.flowKey).toBe('k');
    }
  }, 30_000);

  it('runs a child of another app, a failed child answers isFailed with its error', async () => {
    const { runner, app: parentApp } = await worlds.setup(async (context) => {
      const ok = await context.invoke<string>('ok', { url: context.requestPayload as string, body: { say: 'hello' } });
      const bad = await context.invoke('bad', { url: context.requestPayload as string, body: { say: 'fail' } });
      return { ok, bad };
    });
    const { app: childApp } = await worlds.app(runner, async (context) => {
      const input = await context.run('read', () => (context.requestPayload as { say: string }).say);
      if (input === 'fail') throw new NonRetryableError('the child gave up');
      return `child saw ${String(input)}`;
    });
    const parentId = await startThroughApp(parentApp.url, childApp.url);
    const { run } = await waitForFinish(runner.runner, parentId);
    expect(run.status).toBe('completed');
    const output = value(run.output) as {
      ok: unknown;
      bad: { body: { message: string }; isFailed: boolean; isCanceled: boolean };
    };
    expect(output.ok).toEqual({ body: 'child saw hello', isFailed: false, isCanceled: false });
    expect(output.bad.isFailed).toBe(true);
    expect(output.bad.isCanceled).toBe(false);
    expect(output.bad.body.message).toContain('the child gave up');
  });

  it('fails the invoke step when the runner does not allow the child origin, naming the url', async () => {
    const { runner, app } = await worlds.setup(async (context) => {
      try {
        await context.invoke('elsewhere', { url: 'http://192.0.2.1:9/wf' });
        return 'started';
      } catch (error) {
        return (error as Error).message;
      }
    });
    const id = await startThroughApp(app.url);
    const { run, steps } = await waitForFinish(runner.runner, id);
    expect(String(value(run.output))).toContain('192.0.2.1');
    expect(steps[0]).toMatchObject({ kind: 'invoke', status: 'failed' });
    expect((await runner.store.listRuns({})).runs).toHaveLength(1);
  });

  it('cancelling the parent cancels its unfinished child, recursively', async () => {
    const hold = gate();
    const inChild = gate();
    worlds.defer(hold.open);
    const { runner, app } = await worlds.setup(async (context) => {
      const depth = (context.requestPayload as { depth?: number } | undefined)?.depth ?? 0;
      if (depth < 2) return context.invoke('deeper', { url: context.url, body: { depth: depth + 1 } });
      return context.run('hold', async () => {
        inChild.open();
        await hold.promise;
        return 'held';
      });
    });
    const rootId = await startThroughApp(app.url);
    await inChild.promise;
    const runs = (await runner.store.listRuns({})).runs;
    expect(runs).toHaveLength(3);
    const cancelled = await api(runner, 'POST', `/v1/runs/${rootId}/cancel`);
    expect(cancelled.status).toBe(200);
    for (const run of runs) await waitForRun(runner.runner, run.id, (r) => r.status === 'cancelled');
  });

  it('a runner restart while the child runs: the parent still resumes, once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wfkit-invoke-'));
    const dbPath = join(dir, 'runner.db');
    const first = await startTestRunner({ dbPath });
    const release = gate();
    const inChild = gate();
    let childExecutions = 0;
    worlds.defer(release.open);
    const workflow: Workflow<{ child?: boolean }> = async (context) => {
      if (context.requestPayload?.child) {
        return context.run('slow', async () => {
          childExecutions++;
          inChild.open();
          if (childExecutions === 1) await release.promise;
          return 'child done';
        });
      }
      const result = await context.invoke('child', { url: context.url, body: { child: true } });
      return context.run('after', () => result.body);
    };
    const firstApp = await worlds.app(first, workflow);
    const parentId = await startThroughApp(firstApp.app.url);
    await inChild.promise;
    await waitForRun(first.runner, parentId, (r) => r.status === 'waiting');
    await first.close();

    const second = await startTestRunner({ dbPath });
    worlds.defer(() => second.close());
    worlds.defer(() => rmSync(dir, { recursive: true, force: true }));
    const { run, attempts } = await waitForFinish(second.runner, parentId);
    expect(run.status).toBe('completed');
    expect(value(run.output)).toBe('child done');
    expect(attempts.filter((a) => a.outcome === 'done')).toHaveLength(1);
    const runs = (await second.store.listRuns({})).runs;
    expect(runs).toHaveLength(2);
    expect(runs.every((r) => r.status === 'completed')).toBe(true);
    release.open();
  });
});

describe('context.invoke and credentials', () => {
  it("keeps a credential header out of the parent's step and attempt log, as a call's", async () => {
    const { runner, app } = await worlds.setup(async (context) => {
      if (context.requestPayload !== undefined) return 'child';
      return context.invoke('child', {
        url: '/workflow',
        body: { child: true },
        headers: { authorization: 'Bearer secret-xyz', 'x-plain': 'visible' },
      });
    });
    const parentId = await startThroughApp(app.url);
    const { run, steps, attempts } = await waitForFinish(runner.runner, parentId);
    expect(value(run.output)).toMatchObject({ body: 'child', isFailed: false });
    const stored = JSON.stringify(steps[0]!.request);
    expect(stored).toContain('visible');
    expect(stored).not.toContain('secret-xyz');
    expect(JSON.stringify(attempts)).not.toContain('secret-xyz');
    const childId = steps[0]!.eventId!.slice('wf-child:'.length);
    const child = await runner.store.getRun(childId);
    expect(JSON.stringify(child)).not.toContain('secret-xyz');
    expect(child!.headers['x-plain']).toBe('visible');
  });
});
