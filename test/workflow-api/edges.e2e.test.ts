import { describe, expect, it } from 'vitest';
import { StepFailedError } from '../../protocol/errors.js';
import { startThroughApp, waitForFinish } from '../helpers/runner.js';
import { api, useWorlds, value } from './world.js';

/** Documented sharp edges of the workflow API, and `delayMs` on the runner API. */

const worlds = useWorlds();

describe('sharp edges', () => {
  it('a step started inside another step fails the run (NESTED_STEP) naming both, and closes the outer step', async () => {
    const { runner, app } = await worlds.setup(async (context) => {
      await context.run('outer', () => context.run('inner', () => 1));
    });
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(run).toMatchObject({ status: 'failed', error: { code: 'NESTED_STEP' } });
    expect(run.error!.message).toContain('Step "inner" was started inside step "outer"');
    expect(attempts).toHaveLength(1);
    // The outer step never finished: the failed run closes it.
    expect(steps).toMatchObject([{ name: 'outer', status: 'failed', finishedAt: run.finishedAt }]);
  });

  it('a try/catch around a failing step sees nothing during its retries, then the error once they are spent', async () => {
    const story: string[] = [];
    let caught: unknown;
    const { runner, app } = await worlds.setup(
      async (context) => {
        try {
          await context.run('flaky', () => {
            const n = story.filter((s) => s.startsWith('execution')).length + 1;
            story.push(`execution ${n}`);
            throw new TypeError(`down ${n}`);
          });
        } catch (error) {
          caught = error;
          story.push(`caught ${(error as Error).message}`);
        }
        return context.run('after', () => (story.push('after'), 'went on'));
      },
      { retries: 2 },
    );
    const { run, steps } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(story).toEqual(['execution 1', 'execution 2', 'execution 3', 'caught down 3', 'after']);
    expect(caught).toBeInstanceOf(StepFailedError);
    expect(caught).toMatchObject({ name: 'TypeError', message: 'down 3', code: 'STEP_FAILED', step: 'flaky' });
    expect((caught as Error).stack).toContain('down 3');
    expect(run.status).toBe('completed');
    expect(value(run.output)).toBe('went on');
    expect(steps.map((s) => [s.name, s.status, s.reportedExecutions])).toEqual([
      ['flaky', 'failed', 3],
      ['after', 'succeeded', 1],
    ]);
  });

  it('a workflow that returns before its first step completes with no steps', async () => {
    const { runner, app } = await worlds.setup(async (context) => {
      if ((context.requestPayload as { skip?: boolean }).skip) return 'nothing to do';
      return context.run('work', () => 'worked');
    });
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url, { skip: true }));
    expect(run).toMatchObject({ status: 'completed', stepsDone: 0 });
    expect(value(run.output)).toBe('nothing to do');
    expect(steps).toEqual([]);
    expect(attempts.map((a) => a.outcome)).toEqual(['done']);
  });
});

describe('delayMs on POST /v1/runs', () => {
  it('delays the first drive request', async () => {
    const { runner, app } = await worlds.setup(async (context) => context.run('only', () => 'ran'));
    const { status, body } = await api<{ workflowRunId: string }>(runner, 'POST', '/v1/runs', {
      url: app.url,
      body: '{}',
      delayMs: 500,
    });
    expect(status).toBe(201);
    const id = body.workflowRunId;
    const queued = await runner.store.getRun(id);
    expect(queued).toMatchObject({ status: 'queued', nextAt: queued!.createdAt + 500 });
    expect(await runner.store.listAttempts(id)).toEqual([]);
    const { run, attempts } = await waitForFinish(runner.runner, id);
    expect(value(run.output)).toBe('ran');
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.startedAt).toBeGreaterThanOrEqual(run.createdAt + 500);
  });
});
