import { afterEach, describe, expect, it } from 'vitest';
import { Header } from '../../protocol/headers.js';
import type { Workflow } from '../../serve/core/handler.js';
import {
  closeStarted,
  Counter,
  startApp,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  type AppOptions,
  type TestApp,
  type TestRunner,
  type TestRunnerOptions,
} from '../helpers/runner.js';

/**
 * What counts as "the app unreachable", end to end: a proxy's 502/503/504 in front of the real
 * route, and a drive timeout. None spends a step's retries; the run completes once the app answers.
 */

let runner: TestRunner | undefined;
let app: TestApp | undefined;

afterEach(closeStarted);

const FAST = { baseMs: 20, capMs: 100, horizonMs: 60_000 };
const isDrive = (headers: Record<string, unknown>): boolean => headers[Header.Signature] !== undefined;

async function setup(
  workflow: Workflow<any, any>,
  options: Partial<AppOptions>,
  runnerOptions: TestRunnerOptions = {},
): Promise<void> {
  runner = await startTestRunner({ runner: { unreachable: FAST }, ...runnerOptions });
  app = await startApp(workflow, { token: runner.token, runnerUrl: runner.url, retries: 0, ...options });
}

describe('the app unreachable: not a step failure', () => {
  it.each([502, 503, 504])(
    'a %i from a proxy in front of the app: tried again on its own schedule, no retry spent, then completes',
    async (status) => {
      const calls = new Counter();
      let answered = 0;
      await setup(async (context) => context.run('work', () => calls.hit('work')), {
        // The route has no retries: had the 5xx spent one, the run would fail.
        wrap: (handler) => (req, res) => {
          if (!isDrive(req.headers) || answered++ >= 3) return handler(req, res);
          res.writeHead(status, { 'content-type': 'text/plain' }).end('bad gateway');
        },
      });
      const id = await startThroughApp(app!.url);
      const { run, attempts } = await waitForFinish(runner!.runner, id);
      expect(run).toMatchObject({ status: 'completed', failures: 0, unreachableSince: null });
      expect(attempts.map((a) => a.responseStatus)).toEqual([status, status, status, 200]);
      expect(calls.of('work')).toBe(1);
    },
  );

  it('a route slower than the drive timeout: the attempt times out, the signed deadline is send time + the drive timeout', async () => {
    let slow = 1;
    await setup(
      async (context) => context.run('work', () => 1),
      {
        wrap: (handler) => (req, res) => {
          // The first drive answers after the runner stopped waiting.
          if (isDrive(req.headers) && slow-- > 0) return void setTimeout(() => handler(req, res), 1_500);
          handler(req, res);
        },
      },
      { runner: { unreachable: FAST, dispatch: { headersTimeoutMs: 300 } } },
    );
    const id = await startThroughApp(app!.url);
    const { run, attempts } = await waitForFinish(runner!.runner, id);
    expect(run).toMatchObject({ status: 'completed', failures: 0 });
    expect(attempts[0]).toMatchObject({
      responseStatus: null,
      outcome: 'error',
      error: { name: 'EndpointTimeoutError' },
    });
    for (const attempt of attempts)
      expect(Number(attempt.requestHeaders[Header.Deadline]) - attempt.startedAt).toBe(300);
  });
});
