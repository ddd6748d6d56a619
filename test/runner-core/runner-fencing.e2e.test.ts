import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decodeValue } from '../../protocol/values.js';
import { openSqliteStore, type SqliteStore } from '../../runner-core/store/sqlite/store.js';
import {
  Counter,
  gate,
  startApp,
  startTestRunner,
  startThroughApp,
  waitForFinish,
  type TestApp,
  type TestRunner,
} from '../helpers/runner.js';

/**
 * The runner's side of fencing, in one process on a real SQLite file: a second handle on the file
 * plays the runner that took the run over while this one was stalled past its lease.
 */

let runner: TestRunner | undefined;
let app: TestApp | undefined;
let thief: SqliteStore | undefined;

afterEach(async () => {
  vi.restoreAllMocks();
  await runner?.close();
  await app?.close();
  await thief?.close();
  runner = app = thief = undefined;
});

describe('runner: a lost lease', () => {
  it('stops driving the run, commits nothing more of that drive, does not retry it, and drives it again once it is free', async () => {
    const logged: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
    runner = await startTestRunner({ runner: { exclusive: false, pollMs: 20, leaseMs: 60_000 } });
    const test = runner;
    thief = openSqliteStore(test.dbPath);
    const calls = new Counter();
    const held = gate();
    const holding = gate();
    let drives = 0;
    app = await startApp(
      async (context) => {
        await context.run('slow', async () => {
          if (calls.hit('slow') === 1) {
            holding.open();
            await held.promise;
          }
          return 'done';
        });
        await context.run('after', () => calls.hit('after'));
      },
      {
        token: test.token,
        runnerUrl: test.url,
        retryDelay: 10,
        wrap: (handler) => (req: IncomingMessage, res) => {
          if (req.headers['wf-signature'] !== undefined) drives++;
          handler(req, res);
        },
      },
    );
    const id = await startThroughApp(app.url);
    await holding.promise;
    await vi.waitFor(async () => expect((await test.store.listSteps(id))[0]?.status).toBe('running'));

    // Another runner takes the run over, as if this one had stalled past its lease.
    const taken = await thief.claimDue({
      now: Date.now() + 120_000,
      owner: 'runner-thief',
      leaseMs: 600_000,
      limit: 10,
    });
    expect(taken.map((r) => r.id)).toEqual([id]);
    held.open();
    await vi.waitFor(() => expect(test.runner.drivesInFlight).toBe(0));
    expect(logged.filter((line) => line.includes('lost the lease'))).toEqual([
      expect.stringContaining(`lost the lease on run ${id} (runner-thief holds it now`),
    ]);
    // Neither the stale result nor the attempt's log was committed.
    expect((await test.store.listSteps(id)).map((s) => [s.name, s.status])).toEqual([['slow', 'running']]);
    expect(await test.store.listAttempts(id)).toEqual([]);

    // No retry loop: the scheduler keeps polling, and the run stays the thief's.
    const polls = vi.spyOn(test.store, 'claimDue');
    await vi.waitFor(() => expect(polls.mock.calls.length).toBeGreaterThanOrEqual(5));
    expect(drives).toBe(1);

    // Given back, the run is driven again here: the held step runs again, and one result is kept.
    await thief.release(id, 'runner-thief');
    const { run, steps } = await waitForFinish(test.runner, id);
    expect(run.status).toBe('completed');
    expect(steps.map((s) => [s.name, s.status, decodeValue(s.output ?? undefined)])).toEqual([
      ['slow', 'succeeded', 'done'],
      ['after', 'succeeded', calls.of('after')],
    ]);
    expect(calls.of('slow')).toBe(2);
    expect(drives).toBe(2);
  });
});
