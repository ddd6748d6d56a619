import { afterAll, describe, expect, it, vi } from 'vitest';
import { Client } from '../../api/client.js';
import { startApp, waitForFinish } from '../helpers/runner.js';
import { postgresRunners } from './postgres-runners.js';

/**
 * Step logs on PostgreSQL shared by three `wf start` processes: what each step printed, every
 * attempt of a retried step included, is stored once per execution (written in the same statement
 * as the step's result, fenced by the lease) and served by any runner.
 */

const TOKEN = 'wf_step_logs_postgres_test_token';
const RUNS = 6;

const cluster = postgresRunners('step_logs_runner');
const quiet = vi.spyOn(console, 'log').mockImplementation(() => {});
afterAll(() => quiet.mockRestore());

describe('step logs on PostgreSQL with three wf start runners', () => {
  it('keeps each execution of each step, the failed attempt too, and any runner serves them', async () => {
    const { runners, reader } = await cluster.start(TOKEN, 5_000);
    const tries = new Map<string, number>();
    const app = await startApp(
      async (context) => {
        const id = context.workflowRunId;
        await context.run('first', () => console.log(`first of ${id}`));
        await context.run('flaky', async () => {
          const n = (tries.get(id) ?? 0) + 1;
          tries.set(id, n);
          context.log('warn', 'trying', { n });
          if (n === 1) throw new Error('not yet');
        });
      },
      { token: TOKEN, runnerUrl: runners[0].url, retryDelay: 10 },
    );
    const clients = runners.map((r) => new Client({ runnerUrl: r.url, token: TOKEN }));
    const ids: string[] = [];
    for (let n = 0; n < RUNS; n++) ids.push((await clients[n % 3]!.trigger({ url: app.url })).workflowRunId);
    for (const [n, id] of ids.entries()) {
      expect((await waitForFinish(reader, id, 30_000)).run.status, id).toBe('completed');
      const logs = await reader.listStepLogs(id);
      expect(
        logs.map((log) => [log.name, log.status, log.lines.map((l) => l.message)]),
        id,
      ).toEqual([
        ['first', 'succeeded', [`first of ${id}`]],
        ['flaky', 'failed', ['trying']],
        ['flaky', 'succeeded', ['trying']],
      ]);
      expect(logs.filter((log) => log.name === 'flaky').map((log) => log.lines[0]!.fields)).toEqual([
        { n: 1 },
        { n: 2 },
      ]);
      const served = await clients[(n + 1) % 3]!.get(id);
      expect(served.logs).toEqual(logs);
      // Each execution's lines are kept under the attempt it ran in.
      const seqs = new Set(served.attempts.map((a) => a.seq));
      for (const log of logs) expect(seqs.has(log.attempt), `${id} attempt ${log.attempt}`).toBe(true);
    }
  });
});
