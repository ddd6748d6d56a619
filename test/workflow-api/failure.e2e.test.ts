import { describe, expect, it } from 'vitest';
import { NonRetryableError } from '../../protocol/errors.js';
import type { FailureFunctionArgs } from '../../serve/core/options.js';
import { Counter, gate, startThroughApp, waitForFinish } from '../helpers/runner.js';
import { useWorlds, value } from './world.js';

/** Retry policy per workflow and per step, step timeouts, and the `failureFunction`. */

const worlds = useWorlds();

describe('retry options', () => {
  it("a step's retries and retryDelay win over the workflow's", async () => {
    const calls = new Counter();
    const { runner, app } = await worlds.setup(
      async (context) =>
        context.run(
          'flaky',
          () => {
            const n = calls.hit('flaky');
            if (n <= 2) throw new Error(`failure ${n}`);
            return n;
          },
          { retries: 2, retryDelay: 5 },
        ),
      // With the workflow's own policy the first failure would be final, and a retry an hour away.
      { retries: 0, retryDelay: 3_600_000 },
    );
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(run).toMatchObject({ status: 'completed', retries: 0, retryDelayMs: 3_600_000 });
    expect(value(run.output)).toBe(3);
    expect(steps).toMatchObject([{ name: 'flaky', status: 'succeeded', reportedExecutions: 3, failures: 2 }]);
    expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'failed', 'done']);
  });

  it("a step's retries: 0 fails it for good at the first error, whatever the workflow allows", async () => {
    const calls = new Counter();
    const { runner, app } = await worlds.setup(
      async (context) => {
        await context.run(
          'once',
          () => {
            throw new Error(`try ${calls.hit('once')}`);
          },
          { retries: 0 },
        );
      },
      { retries: 5 },
    );
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(calls.of('once')).toBe(1);
    expect(steps).toMatchObject([{ name: 'once', status: 'failed', reportedExecutions: 1, failures: 1 }]);
    expect(run).toMatchObject({ status: 'failed', error: { message: 'try 1', code: 'STEP_FAILED' } });
    expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'failed']);
  });

  it('the workflow options retries and retryDelay are the run policy: 1 + retries executions', async () => {
    const calls = new Counter();
    const { runner, app } = await worlds.setup(
      async (context) => {
        await context.run('always-fails', () => {
          throw new Error(`execution ${calls.hit('always-fails')}`);
        });
      },
      { retries: 1, retryDelay: 5 },
    );
    const { run, steps } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(run).toMatchObject({ status: 'failed', retries: 1, retryDelayMs: 5, error: { message: 'execution 2' } });
    expect(steps).toMatchObject([{ status: 'failed', reportedExecutions: 2, failures: 2 }]);
    expect(calls.of('always-fails')).toBe(2);
  });

  it('a step over its timeout fails with a message naming the timeout, and is retried like any failure', async () => {
    const never = gate();
    worlds.defer(never.open);
    const calls = new Counter();
    const { runner, app } = await worlds.setup(async (context) => {
      await context.run(
        'slow',
        async () => {
          calls.hit('slow');
          await never.promise;
        },
        { timeout: 0.1, retries: 1 },
      );
    });
    const { run, steps, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    const message = 'Step "slow" took longer than its timeout of 100 ms.';
    expect(calls.of('slow')).toBe(2);
    expect(attempts.slice(0, 2).map((a) => a.error)).toMatchObject([
      { code: 'TIMEOUT', message },
      { code: 'TIMEOUT', message },
    ]);
    expect(steps).toMatchObject([{ name: 'slow', status: 'failed', reportedExecutions: 2, error: { message } }]);
    expect(run).toMatchObject({ status: 'failed', error: { message } });
  });
});

describe('failureFunction', () => {
  /** Records every call of the failureFunction (the route's process is this test's). */
  function recorder(fail?: Error): {
    calls: FailureFunctionArgs[];
    failureFunction: (args: FailureFunctionArgs) => Promise<void>;
  } {
    const calls: FailureFunctionArgs[] = [];
    return {
      calls,
      failureFunction: async (args) => {
        calls.push(args);
        if (fail) throw fail;
      },
    };
  }

  it('is called exactly once when a run fails, with the error and the failed step', async () => {
    const { calls, failureFunction } = recorder();
    const { runner, app } = await worlds.setup(
      async (context) => {
        await context.run('reserve', () => 'ok');
        await context.run('charge', () => {
          throw new NonRetryableError('card declined');
        });
      },
      { failureFunction },
    );
    const id = await startThroughApp(app.url, { order: 7 });
    const { run, attempts } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'failed', attempts: 3, error: { message: 'card declined' } });
    expect(calls).toHaveLength(1);
    const [args] = calls;
    expect(args!.error).toBeInstanceOf(Error);
    expect(args!.error).toMatchObject({ name: 'NonRetryableError', message: 'card declined' });
    expect(args!.failedStep).toEqual({ index: 1, name: 'charge', kind: 'run' });
    expect(args!.context).toMatchObject({ workflowRunId: id, requestPayload: { order: 7 }, url: app.url });
    // The route says it has a failureFunction; the runner logs the call as one more attempt.
    expect(attempts[1]!.responseHeaders).toMatchObject({ 'wf-failure-function': '1' });
    expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'failed', 'failure-function done']);
    expect(JSON.parse(attempts[2]!.requestBody)).toMatchObject({
      failure: { error: { message: 'card declined' }, failedStep: { name: 'charge' } },
    });
  });

  it('gets no failed step when the workflow itself threw', async () => {
    const { calls, failureFunction } = recorder();
    const { runner, app } = await worlds.setup(
      async (context) => {
        await context.run('fine', () => 1);
        throw new NonRetryableError('bad input');
      },
      { failureFunction },
    );
    const { run } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(run.status).toBe('failed');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.error.message).toBe('bad input');
    expect(calls[0]!.failedStep).toBeUndefined();
  });

  it('is not called for a run that completes, nor for one that caught its failed step', async () => {
    const { calls, failureFunction } = recorder();
    const { runner, app } = await worlds.setup(
      async (context) => {
        try {
          await context.run('fails', () => {
            throw new NonRetryableError('handled');
          });
        } catch {
          return 'recovered';
        }
      },
      { failureFunction },
    );
    const { run, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(run.status).toBe('completed');
    expect(value(run.output)).toBe('recovered');
    expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'done']);
    expect(calls).toHaveLength(0);
  });

  it('that throws is logged as a failed attempt, and the run stays failed with its own error', async () => {
    const { calls, failureFunction } = recorder(new Error('alerting is down'));
    const { runner, app } = await worlds.setup(
      async (context) => {
        await context.run('charge', () => {
          throw new NonRetryableError('card declined');
        });
      },
      { failureFunction },
    );
    const { run, attempts } = await waitForFinish(runner.runner, await startThroughApp(app.url));
    expect(calls).toHaveLength(1);
    expect(run).toMatchObject({ status: 'failed', error: { message: 'card declined' } });
    expect(attempts.at(-1)).toMatchObject({
      outcome: 'failure-function failed',
      error: { message: 'alerting is down' },
    });
    expect(attempts).toHaveLength(3);
  });
});
