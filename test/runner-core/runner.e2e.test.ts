import { afterEach, describe, expect, it } from 'vitest';
import { NonRetryableError, RetryAfterError } from '../../protocol/errors.js';
import { decodeValue, encodeValue } from '../../protocol/values.js';
import { Runner } from '../../runner-core/runner.js';
import type { Workflow } from '../../serve/core/handler.js';
import {
  Counter,
  gate,
  startApp,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  waitForRun,
  type AppOptions,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/** End to end: the real `serve` handler on node:http, the real Runner and API, a real SQLite file. */

let runner: TestRunner | undefined;
let app: TestApp | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await runner?.close();
  await app?.close();
  runner = undefined;
  app = undefined;
});

/** A fresh runner and an app serving `workflow` against it (retries 10 ms apart unless told). */
async function setup(
  workflow: Workflow<any, any>,
  options: Partial<AppOptions> = {},
): Promise<{ runner: TestRunner; app: TestApp }> {
  runner = await startTestRunner();
  app = await startApp(workflow, { token: runner.token, runnerUrl: runner.url, retryDelay: 10, ...options });
  return { runner, app };
}

it('runs on the pinned Node 24', () => {
  expect(process.version).toMatch(/^v24\./);
});

describe('runner e2e: happy paths', () => {
  it('completes a two-step run; the second step sees the first result', async () => {
    const calls = new Counter();
    const { runner, app } = await setup(async (context) => {
      const upper = await context.run('initial-step', () => {
        calls.hit('initial-step');
        return (context.requestPayload as { text: string }).text.toUpperCase();
      });
      const length = await context.run('second-step', () => {
        calls.hit('second-step');
        return `${upper}:${upper.length}`;
      });
      return { length };
    });
    const id = await startThroughApp(app.url, { text: 'hello' });
    expect(id).toMatch(/^wfr_[0-9A-HJKMNP-TV-Z]{26}$/);
    const { run, steps, attempts } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'completed', stepsDone: 2, attempts: 1, failures: 0, error: null });
    expect(decodeValue(run.output ?? undefined)).toEqual({ length: 'HELLO:5' });
    expect(
      steps.map((s) => [s.index, s.name, s.status, decodeValue(s.output ?? undefined), s.reportedExecutions, s.group]),
    ).toEqual([
      [0, 'initial-step', 'succeeded', 'HELLO', 1, 1],
      [1, 'second-step', 'succeeded', 'HELLO:5', 1, 2],
    ]);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      seq: 1,
      responseStatus: 200,
      outcome: 'done',
      error: null,
      requestUrl: app.url,
    });
    expect(attempts[0]!.requestHeaders['wf-signature']).toBe('[redacted]');
    expect(calls.counts).toEqual(
      new Map([
        ['initial-step', 1],
        ['second-step', 1],
      ]),
    );
  });

  it('runs sync and async steps, with any JSON-like result and undefined', async () => {
    const { runner, app } = await setup(async (context) => {
      const sync = context.run('sync', () => 21);
      const a = await sync;
      const b = await context.run('async', async () => {
        await new Promise((resolve) => setImmediate(resolve));
        return { doubled: a * 2, list: [null, true, 'x'] };
      });
      const nothing = await context.run('nothing', () => undefined);
      const nil = await context.run('null', async () => null);
      return { b, nothing: nothing === undefined, nil, auth: context.headers.authorization ?? null };
    });
    const id = await startThroughApp(app.url, undefined, { authorization: 'Bearer client-secret' });
    const { run, steps } = await waitForFinish(runner.runner, id);
    expect(run.status).toBe('completed');
    expect(steps.map((s) => s.output)).toEqual([
      encodeValue(21, 'sync'),
      expect.any(String),
      null,
      encodeValue(null, 'null'),
    ]);
    expect(steps.map((s) => decodeValue(s.output ?? undefined))).toEqual([
      21,
      { doubled: 42, list: [null, true, 'x'] },
      undefined,
      null,
    ]);
    // Credentials of the start request are redacted before they are stored or handed to the workflow.
    expect(decodeValue(run.output!)).toEqual({
      b: { doubled: 42, list: [null, true, 'x'] },
      nothing: true,
      nil: null,
      auth: '[redacted]',
    });
    expect(run.headers.authorization).toBe('[redacted]');
  });
});

describe('runner e2e: failures and retries', () => {
  it('retries a step that throws twice, then completes; earlier steps run once', async () => {
    const calls = new Counter();
    const { runner, app } = await setup(async (context) => {
      await context.run('first', () => calls.hit('first'));
      await context.run('flaky', () => {
        const n = calls.hit('flaky');
        if (n <= 2) throw new Error(`flaky failure ${n}`);
        return n;
      });
    });
    const id = await startThroughApp(app.url);
    const { run, steps, attempts } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'completed', stepsDone: 2, attempts: 3, failures: 0 });
    expect(steps[0]).toMatchObject({ name: 'first', status: 'succeeded', reportedExecutions: 1, failures: 0 });
    expect(steps[1]).toMatchObject({
      name: 'flaky',
      status: 'succeeded',
      reportedExecutions: 3,
      failures: 2,
      output: encodeValue(3, 'flaky'),
    });
    expect(calls.of('first')).toBe(1);
    expect(calls.of('flaky')).toBe(3);
    expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'failed', 'done']);
    for (const [i, attempt] of attempts.slice(0, 2).entries()) {
      expect(attempt.error).toMatchObject({ name: 'Error', message: `flaky failure ${i + 1}` });
      expect(attempt.error!.stack).toContain(`flaky failure ${i + 1}`);
      expect(attempt.error!.stack).toMatch(/\n\s+at /);
    }
    expect(JSON.parse(attempts[1]!.requestBody)).toMatchObject({
      attempt: 2,
      steps: [{ index: 0, name: 'first', kind: 'run', output: encodeValue(1, 'first') }],
    });
  });

  it('fails at once on NonRetryableError: the step fails for good, one replay rethrows it, the run fails', async () => {
    const calls = new Counter();
    const { runner, app } = await setup(async (context) => {
      await context.run('charge', () => {
        calls.hit('charge');
        throw new NonRetryableError('card declined');
      });
      await context.run('never', () => calls.hit('never'));
    });
    const id = await startThroughApp(app.url);
    const { run, steps, attempts } = await waitForFinish(runner.runner, id);
    // The replay rethrows the step's error (StepFailedError, same name, message and stack) and
    // the workflow does not catch it, so the run fails with it.
    expect(run).toMatchObject({
      status: 'failed',
      attempts: 2,
      error: { name: 'NonRetryableError', message: 'card declined', code: 'STEP_FAILED' },
    });
    expect(run.error!.stack).toBe(steps[0]!.error!.stack);
    expect(steps).toMatchObject([
      {
        name: 'charge',
        status: 'failed',
        reportedExecutions: 1,
        failures: 1,
        error: { message: 'card declined', code: 'NON_RETRYABLE' },
      },
    ]);
    expect(attempts.map((a) => a.outcome)).toEqual(['failed', 'failed']);
    expect(JSON.parse(attempts[1]!.requestBody)).toMatchObject({
      steps: [{ index: 0, name: 'charge', error: { message: 'card declined' } }],
    });
    // No failureFunction on this route: the route says so, and the runner does not call it.
    expect(attempts[1]!.responseHeaders).not.toHaveProperty('wf-failure-function');
    expect(calls.counts).toEqual(new Map([['charge', 1]]));
  });

  it('fails after 1 + retries executions when retries run out', async () => {
    const calls = new Counter();
    const { runner, app } = await setup(
      async (context) => {
        await context.run('always-fails', () => {
          throw new Error(`attempt ${calls.hit('always-fails')} failed`);
        });
      },
      { retries: 2 },
    );
    const id = await startThroughApp(app.url);
    const { run, steps, attempts } = await waitForFinish(runner.runner, id);
    expect(calls.of('always-fails')).toBe(3);
    // Three executions fail the step for good; a fourth drive replays its error into the workflow.
    expect(run).toMatchObject({
      status: 'failed',
      retries: 2,
      failures: 1,
      attempts: 4,
      error: { message: 'attempt 3 failed', code: 'STEP_FAILED' },
    });
    expect(steps).toMatchObject([{ status: 'failed', reportedExecutions: 3, failures: 3 }]);
    expect(attempts.map((a) => a.error?.message)).toEqual([
      'attempt 1 failed',
      'attempt 2 failed',
      'attempt 3 failed',
      'attempt 3 failed',
    ]);
  });

  it('delays the retry by RetryAfterError', async () => {
    const delayMs = 300;
    const calls = new Counter();
    const { runner, app } = await setup(async (context) => {
      await context.run('rate-limited', () => {
        if (calls.hit('rate-limited') === 1) throw new RetryAfterError('slow down', delayMs);
        return 'ok';
      });
    });
    const id = await startThroughApp(app.url);
    const { run, attempts } = await waitForFinish(runner.runner, id);
    expect(run.status).toBe('completed');
    expect(attempts).toHaveLength(2);
    expect(attempts[0]!.error).toMatchObject({ name: 'RetryAfterError', message: 'slow down' });
    // The app's retryDelay is 10 ms; only the RetryAfterError explains a gap this long.
    expect(attempts[1]!.startedAt - attempts[0]!.startedAt).toBeGreaterThanOrEqual(delayMs);
  });

  it('fails the run on a determinism error naming both steps, before the new step runs', async () => {
    let flipped = false;
    const calls = new Counter();
    const { runner, app } = await setup(async (context) => {
      if (flipped) await context.run('x', () => calls.hit('x'));
      else await context.run('a', () => calls.hit('a'));
      await context.run('b', () => {
        calls.hit('b');
        flipped = true; // the next replay asks for "x" where "a" is recorded
        throw new Error('try b again');
      });
    });
    const id = await startThroughApp(app.url);
    const { run, attempts } = await waitForFinish(runner.runner, id);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ name: 'DeterminismError', code: 'DETERMINISM' });
    expect(run.error!.message).toContain('"a"');
    expect(run.error!.message).toContain('"x"');
    expect(attempts).toHaveLength(2);
    expect(calls.counts).toEqual(
      new Map([
        ['a', 1],
        ['b', 1],
      ]),
    );
  });
});

describe('runner e2e: long runs', () => {
  it('continues across drive requests when the time budget runs out', async () => {
    const calls = new Counter();
    const { runner, app } = await setup(
      async (context) => {
        let sum = 0;
        for (let i = 0; i < 5; i++) sum += await context.run(`step-${i}`, () => (calls.hit(i), i));
        return sum;
      },
      { timeBudgetMs: 0 },
    );
    const id = await startThroughApp(app.url);
    const { run, steps, attempts } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'completed', output: encodeValue(10, 'the workflow'), stepsDone: 5 });
    expect(attempts.length).toBeGreaterThan(1);
    expect(attempts.map((a) => a.outcome)).toEqual([...Array(attempts.length - 1).fill('continue'), 'done']);
    expect(run.attempts).toBe(attempts.length);
    for (let i = 0; i < 5; i++) expect(calls.of(i), `step ${i}`).toBe(1);
    expect(steps.map((s) => s.reportedExecutions)).toEqual([1, 1, 1, 1, 1]);
  });

  it('resumes a run after the runner stopped mid-step and a new runner took over', async () => {
    const calls = new Counter();
    const hold = gate();
    const inStep = gate();
    const { runner, app } = await setup(async (context) => {
      await context.run('one', () => calls.hit('one'));
      await context.run('two', async () => {
        if (calls.hit('two') === 1) {
          inStep.open();
          await hold.promise;
        }
      });
      await context.run('three', () => calls.hit('three'));
    });
    const id = await startThroughApp(app.url);
    await inStep.promise;
    await waitForRun(runner.runner, id, (r) => r.stepsDone === 1);
    // Graceful stop with no grace: the drive is aborted and logged; the run stays unfinished.
    await runner.runner.stop(0);
    hold.open();
    const next = new Runner({ store: runner.store, tokens: [runner.token], exclusive: true });
    cleanups.push(() => next.stop(0));
    await next.start();
    const { run, steps, attempts } = await waitForFinish(next, id);
    expect(run.status).toBe('completed');
    expect(attempts.map((a) => [a.seq, a.outcome])).toEqual([
      [1, 'aborted'],
      [2, 'done'],
    ]);
    expect(steps.map((s) => [s.name, s.reportedExecutions])).toEqual([
      ['one', 1],
      ['two', 2],
      ['three', 1],
    ]);
    expect(calls.of('one')).toBe(1);
  });
});
