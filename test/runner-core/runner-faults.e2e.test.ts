import { afterEach, describe, expect, it, vi } from 'vitest';
import { PROTOCOL_VERSION } from '../../protocol/headers.js';
import type { DriveRequest } from '../../protocol/messages.js';
import { signRequest } from '../../protocol/signing.js';
import { decodeValue, encodeValue } from '../../protocol/values.js';
import { newRunId } from '../../runner-core/ids.js';
import type { Workflow } from '../../serve/core/handler.js';
import {
  closeStarted,
  Counter,
  gate,
  startApp,
  startTestRunner,
  startThroughApp,
  unusedPort,
  waitForFinish,
  waitForRun,
  type AppOptions,
  type TestApp,
  type TestRunner,
  type TestRunnerOptions,
} from '../helpers/runner.js';

/** End to end with faults injected in front of the real handler: 5xx, refused connections, cut streams, forgeries. */

let runner: TestRunner | undefined;
let app: TestApp | undefined;

afterEach(closeStarted);

async function setup(
  workflow: Workflow<any, any>,
  options: Partial<AppOptions> = {},
  runnerOptions: TestRunnerOptions = {},
): Promise<{ runner: TestRunner; app: TestApp }> {
  runner = await startTestRunner(runnerOptions);
  app = await startApp(workflow, { token: runner.token, runnerUrl: runner.url, retryDelay: 10, ...options });
  return { runner, app };
}

const isDrive = (headers: Record<string, unknown>): boolean => headers['wf-signature'] !== undefined;

/** Unfinished work the scheduler could still pick up, however long it waited. */
async function dueEver(test: TestRunner): Promise<string[]> {
  const runs = await test.store.claimDue({ now: Date.now() + 24 * 3600_000, limit: 100, owner: 'probe', leaseMs: 1 });
  return runs.map((r) => r.id);
}

describe('runner e2e: an unavailable route', () => {
  it('retries a 503 with Retry-After: 0 at once, then completes', async () => {
    const calls = new Counter();
    let refused = 0;
    const { runner, app } = await setup(async (context) => context.run('work', () => calls.hit('work')), {
      retryDelay: 60_000, // only Retry-After: 0 makes the retries fast
      wrap: (handler) => (req, res) => {
        if (isDrive(req.headers) && refused < 2) {
          refused++;
          res.writeHead(503, { 'retry-after': '0', 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { code: 'UNAVAILABLE', message: 'warming up' } }));
          return;
        }
        handler(req, res);
      },
    });
    const id = await startThroughApp(app.url);
    const { run, attempts } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'completed', output: encodeValue(1, 'the workflow') });
    expect(attempts.map((a) => [a.responseStatus, a.outcome])).toEqual([
      [503, 'error'],
      [503, 'error'],
      [200, 'done'],
    ]);
    expect(attempts[0]!.error).toMatchObject({
      name: 'EndpointError',
      message: expect.stringContaining('503: warming up'),
    });
    expect(attempts[0]!.responseHeaders!['retry-after']).toBe('0');
    expect(attempts[0]!.responseBody).toContain('warming up');
    expect(calls.of('work')).toBe(1);
  });

  it('takes a drive the route got after its signed deadline (408) for a delay on the way: no retry spent, then completes', async () => {
    const calls = new Counter();
    let held = 0;
    const { runner, app } = await setup(
      async (context) => context.run('work', () => calls.hit('work')),
      {
        retries: 0,
        // The first drive reaches the route 500 ms late, past its deadline but while the runner still waits.
        wrap: (handler) => (req, res) => {
          if (isDrive(req.headers) && held++ === 0) setTimeout(() => handler(req, res), 500);
          else handler(req, res);
        },
      },
      // The signed deadline is send time + min(drive timeout, lease): a 300 ms lease makes it 300 ms.
      { runner: { leaseMs: 300 } },
    );
    const id = await startThroughApp(app.url);
    const { run, attempts } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'completed', failures: 0, unreachableSince: null });
    expect(attempts[0]).toMatchObject({ responseStatus: 408, outcome: 'error' });
    expect(attempts[0]!.responseBody).toContain('Late request');
    expect(attempts.at(-1)).toMatchObject({ responseStatus: 200, outcome: 'done' });
    expect(calls.of('work')).toBe(1);
  });

  it('retries while the route refuses connections, and completes once it is up', async () => {
    runner = await startTestRunner();
    const port = await unusedPort();
    const url = `http://127.0.0.1:${port}/workflow`;
    const response = await fetch(`${runner.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url, body: '{"n":2}', headers: {}, retries: 10, retryDelayMs: 20 }),
    });
    expect(response.status).toBe(201);
    const { workflowRunId: id } = (await response.json()) as { workflowRunId: string };
    await vi.waitFor(async () => expect((await runner!.store.listAttempts(id)).length).toBeGreaterThan(0), {
      timeout: 10_000,
      interval: 10,
    });

    app = await startApp(
      async (context) => context.run('double', () => (context.requestPayload as { n: number }).n * 2),
      {
        token: runner.token,
        runnerUrl: runner.url,
        port,
      },
    );
    const { run, attempts } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'completed', output: encodeValue(4, 'the workflow') });
    expect(attempts[0]).toMatchObject({
      responseStatus: null,
      outcome: 'error',
      error: { message: expect.stringContaining('ECONNREFUSED') },
    });
    expect(attempts.at(-1)!.outcome).toBe('done');
  });
});

describe('runner e2e: drive requests the app must refuse', () => {
  it('answers a forged drive with 401 and treats an unsigned one as a start, never running it as a drive', async () => {
    const seen: string[] = [];
    const { runner, app } = await setup(async (context) => {
      seen.push(context.workflowRunId);
      return context.run('step', () => context.requestPayload);
    });
    const forgedId = newRunId();
    const drive: DriveRequest = {
      v: PROTOCOL_VERSION,
      runId: forgedId,
      body: '{"evil":true}',
      headers: {},
      steps: [],
      attempt: 1,
    };
    const body = JSON.stringify(drive);
    const post = (headers: Record<string, string>) =>
      fetch(app.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

    const forgeries = [
      await signRequest({ url: app.url, body, tokens: ['another-token'] }),
      await signRequest({ url: 'http://127.0.0.1:1/elsewhere', body, tokens: [runner.token] }),
      await signRequest({
        url: app.url,
        body,
        tokens: [runner.token],
        timestamp: Math.floor(Date.now() / 1000) - 3600,
      }),
      { 'wf-signature-id': 'x' },
    ];
    for (const headers of forgeries) {
      const response = await post(headers);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('SIGNATURE');
    }

    const unsigned = await post({});
    expect(unsigned.status).toBe(200);
    const { workflowRunId } = (await unsigned.json()) as { workflowRunId: string };
    expect(workflowRunId).not.toBe(forgedId);
    const { run } = await waitForFinish(runner.runner, workflowRunId);
    // A new run whose payload is the drive-shaped body: nothing of the forged run was replayed.
    expect(run).toMatchObject({ status: 'completed', body });
    expect(decodeValue(run.output!)).toEqual(JSON.parse(body));
    expect(seen).not.toContain(forgedId);
    expect(new Set(seen)).toEqual(new Set([workflowRunId]));
    expect(await runner.store.getRun(forgedId)).toBeUndefined();
  });
});

describe('runner e2e: large and interrupted drives', () => {
  it('has the route fetch committed steps that are too large to inline', async () => {
    const calls = new Counter();
    const { runner, app } = await setup(
      async (context) => {
        const a = await context.run('a', () => (calls.hit('a'), 'a'.repeat(20)));
        const b = await context.run('b', () => (calls.hit('b'), `${a.length}b`));
        return context.run('c', () => {
          if (calls.hit('c') === 1) throw new Error('c fails once');
          return `${b}c`;
        });
      },
      {},
      { runner: { inlineStepsLimitBytes: 10 } },
    );
    const id = await startThroughApp(app.url);
    const { run, attempts } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'completed', output: encodeValue('20bc', 'the workflow') });
    expect(JSON.parse(attempts[0]!.requestBody).steps).toEqual([]);
    expect(JSON.parse(attempts[1]!.requestBody).steps).toBeNull();
    expect(runner.requests).toContain(`GET /v1/runs/${id}/steps`);
    expect([calls.of('a'), calls.of('b'), calls.of('c')]).toEqual([1, 1, 2]);
  });

  it('does not execute a committed step again when the outcome stream is cut', async () => {
    const calls = new Counter();
    let cuts = 0;
    const { runner, app } = await setup(
      async (context) => {
        for (let i = 0; i < 3; i++) await context.run(`s${i}`, () => calls.hit(i));
      },
      {
        wrap: (handler) => (req, res) => {
          if (!isDrive(req.headers) || cuts > 0) return handler(req, res);
          cuts++;
          // Forward lines up to the first finished step, drop the rest, then drop the connection
          // once that step is committed (so the runner surely received it).
          const runId = String(req.headers['wf-run-id']);
          const write = res.write.bind(res) as (chunk: unknown) => boolean;
          let cut = false;
          res.write = ((chunk: Uint8Array) => {
            if (cut) return true;
            const ok = write(chunk);
            if (Buffer.from(chunk).toString().includes('"t":"step"')) {
              cut = true;
              void waitForRun(runner!.runner, runId, (r) => r.stepsDone === 1).then(() => res.socket?.destroy());
            }
            return ok;
          }) as typeof res.write;
          handler(req, res);
        },
      },
    );
    const id = await startThroughApp(app.url);
    const { run, steps, attempts } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'completed', stepsDone: 3 });
    expect(attempts[0]).toMatchObject({ responseStatus: 200, outcome: 'error' });
    expect(calls.of(0)).toBe(1);
    expect(steps[0]).toMatchObject({ name: 's0', reportedExecutions: 1 });
    expect(JSON.parse(attempts[1]!.requestBody).steps).toMatchObject([{ index: 0, name: 's0' }]);
  });
});

describe('runner e2e: cancel', () => {
  it('cancels a run waiting for its retry; nothing is scheduled for it again', async () => {
    const calls = new Counter();
    const { runner, app } = await setup(
      async (context) =>
        context.run('down', () => {
          throw new Error(`down ${calls.hit('down')}`);
        }),
      { retryDelay: 60_000 },
    );
    const id = await startThroughApp(app.url);
    await waitForRun(runner.runner, id, (r) => r.attempts === 1 && r.failures === 1);
    const response = await fetch(`${runner.url}/v1/runs/${id}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}` },
    });
    expect(response.status).toBe(200);
    const run = await runner.store.getRun(id);
    expect(run).toMatchObject({ status: 'cancelled', nextAt: null, attempts: 1 });
    expect(run!.finishedAt).not.toBeNull();
    expect(await dueEver(runner)).toEqual([]);
    expect(await runner.store.nextDueAt()).toBeNull();
    expect(calls.of('down')).toBe(1);
  });

  it('cancels a run in flight: the drive is aborted and logged', async () => {
    const hold = gate();
    const inStep = gate();
    const { runner, app } = await setup(async (context) => {
      await context.run('slow', async () => {
        inStep.open();
        await hold.promise;
      });
      await context.run('after', () => 1);
    });
    const id = await startThroughApp(app.url);
    await inStep.promise;
    const response = await fetch(`${runner.url}/v1/runs/${id}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runner.token}` },
    });
    expect(response.status).toBe(200);
    hold.open();
    await vi.waitFor(
      async () => expect(await runner.store.listAttempts(id)).toMatchObject([{ seq: 1, outcome: 'aborted' }]),
      { timeout: 10_000 },
    );
    const run = await runner.store.getRun(id);
    expect(run).toMatchObject({ status: 'cancelled', nextAt: null, attempts: 1 });
    expect(await dueEver(runner)).toEqual([]);
  });
});
