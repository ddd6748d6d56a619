import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import { Counter, startApp, waitForFinish, type TestApp } from '../helpers/runner.js';
import { postgresRunners } from './postgres-runners.js';

/**
 * Bulk resume on PostgreSQL shared by three `wf start` processes, one SIGKILLed while the resumed
 * runs are being driven: every run completes, and the steps that had succeeded before the failure
 * ran exactly once (resume kept them; only the failed step and those after it ran again).
 */

const TOKEN = 'wf_resume_postgres_test_token';
const RUNS = 30;
const LEASE_MS = 2_000;

let app: TestApp | undefined;
const executions = new Counter();
const state = { broken: true };

const cluster = postgresRunners('resume_runner');

describe('resume on PostgreSQL with three wf start runners', () => {
  it('bulk-resumes failed runs; a runner killed meanwhile loses nothing and no kept step runs again', async () => {
    const { runners, reader } = await cluster.start(TOKEN, LEASE_MS);
    const [killed, , survivor] = runners;
    app = await startApp(
      async (context) => {
        const id = context.workflowRunId;
        const a = await context.run('one', () => executions.hit(`${id}:one`));
        const b = await context.run('two', () => executions.hit(`${id}:two`));
        await context.run('three', async () => {
          executions.hit(`${id}:three`);
          await sleep(100); // long enough for the kill below to land while runs are inside it
          if (state.broken) throw new Error('three is broken');
        });
        return context.run('four', () => a + b);
      },
      { token: TOKEN, runnerUrl: survivor.url },
    );
    const clients = runners.map((r) => new Client({ runnerUrl: r.url, token: TOKEN }));
    const ids: string[] = [];
    for (let n = 0; n < RUNS; n++)
      ids.push((await clients[n % 3]!.trigger({ url: app.url, retries: 0 })).workflowRunId);
    for (const id of ids) expect((await waitForFinish(reader, id, 30_000)).run.status).toBe('failed');

    state.broken = false;
    // Resumed through the runner about to be killed: it wakes at once and claims them first.
    const client = clients[0]!;
    expect(
      await client.bulk({ action: 'resume', filter: { status: 'failed', url: app.url }, dryRun: true }),
    ).toMatchObject({ matched: RUNS, done: 0 });
    const result = await client.bulk({ action: 'resume', filter: { status: 'failed', url: app.url } });
    expect(result).toEqual({ matched: RUNS, done: RUNS, failed: [], truncated: false });
    // Kill one runner while it holds resumed runs (bounded wait: the runs are claimed within a poll or two).
    let heldAtKill = 0;
    for (let i = 0; i < 200 && heldAtKill === 0; i++) {
      const rows = await reader.query<{ n: number }[]>(
        `SELECT count(*) AS n FROM runs WHERE lease_owner = $1 AND status NOT IN ('completed', 'failed', 'cancelled')`,
        [killed.owner],
      );
      heldAtKill = Number(rows[0]?.n ?? 0);
      if (heldAtKill === 0) await sleep(10);
    }
    killed.child.kill('SIGKILL');
    expect(heldAtKill, 'the killed runner held resumed runs when it was killed').toBeGreaterThan(0);

    for (const id of ids) {
      const { run, steps } = await waitForFinish(reader, id, 30_000);
      expect(run.status, id).toBe('completed');
      expect(
        steps.map((s) => [s.name, s.status]),
        id,
      ).toEqual([
        ['one', 'succeeded'],
        ['two', 'succeeded'],
        ['three', 'succeeded'],
        ['four', 'succeeded'],
      ]);
      expect(
        steps.slice(0, 2).map((s) => s.reportedExecutions),
        id,
      ).toEqual([1, 1]);
      expect([executions.of(`${id}:one`), executions.of(`${id}:two`)], id).toEqual([1, 1]);
      expect(executions.of(`${id}:three`), id).toBeGreaterThanOrEqual(2);
    }
    // Nothing resumed twice, nothing failed again: a second resume finds nothing to do.
    expect(
      (await clients[2]!.bulk({ action: 'resume', filter: { status: 'failed', url: app.url }, dryRun: true })).matched,
    ).toBe(0);
  });
});
