import { afterEach, describe, expect, it } from 'vitest';
import { Header, NDJSON } from '../../protocol/headers.js';
import { encodeOutcome } from '../../protocol/outcome.js';
import {
  closeStarted,
  startApp,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/** `reportedExecutions` counts every start the runner read, even when what follows it is unusable. */

let runner: TestRunner | undefined;
let app: TestApp | undefined;

afterEach(closeStarted);

describe('reportedExecutions', () => {
  it('counts a started line read in the same chunk as a malformed line after it', async () => {
    runner = await startTestRunner();
    app = await startApp(async (context) => context.run('work', () => 1), {
      token: runner.token,
      runnerUrl: runner.url,
      wrap: (handler) => (req, res) => {
        if (req.headers[Header.Signature] === undefined) return handler(req, res);
        // A route (or a proxy) that garbles its stream after reporting that the step started.
        res.writeHead(200, { 'content-type': NDJSON });
        res.end(encodeOutcome({ t: 'started', index: 0, name: 'work', kind: 'run', group: 1 }) + 'not an outcome\n');
      },
    });
    const id = await startThroughApp(app.url);
    const { run, steps } = await waitForFinish(runner.runner, id);
    expect(run).toMatchObject({ status: 'failed', error: { name: 'ProtocolError' } });
    expect(steps.map((s) => [s.name, s.status, s.reportedExecutions])).toEqual([['work', 'failed', 1]]);
  });
});
