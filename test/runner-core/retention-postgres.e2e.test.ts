import { describe, expect, it, vi } from 'vitest';
import { Client } from '../../api/client.js';
import { Counter, startApp } from '../helpers/runner.js';
import { postgresRunners } from './postgres-runners.js';

/**
 * Retention with three `wf start --retention 2s` processes on one PostgreSQL database: every
 * finished run is pruned once (the runners' "pruned" lines add up to the runs, with no failure),
 * a run still to do stays, and `wf prune`'s route answers `busy` or the counts, never an error.
 */

const TOKEN = 'wf_retention_postgres_test_token';
const RUNS = 45;

const cluster = postgresRunners('retention_runner');

describe('retention on PostgreSQL with three wf start runners', () => {
  it('prunes each finished run once and keeps the runs still to do', async () => {
    const { runners, reader } = await cluster.start(TOKEN, 2_000, { args: ['--retention', '2s'] });
    const ran = new Counter();
    const app = await startApp(async (context) => context.run('only', () => ran.hit(context.workflowRunId)), {
      token: TOKEN,
      runnerUrl: runners[0].url,
    });
    const clients = runners.map((r) => new Client({ runnerUrl: r.url, token: TOKEN }));
    const later = (await clients[0]!.trigger({ url: app.url, delay: '1h' })).workflowRunId;
    const ids: string[] = [];
    for (let n = 0; n < RUNS; n++) ids.push((await clients[n % 3]!.trigger({ url: app.url })).workflowRunId);
    // Each ran (a run may be pruned 2 s after it finished: its row is no witness).
    await vi.waitFor(() => expect(ids.filter((id) => ran.of(id) === 0)).toEqual([]), {
      timeout: 30_000,
      interval: 100,
    });

    await vi.waitFor(
      async () => {
        const [row] = await reader.query<{ n: number }[]>('SELECT count(*)::int AS n FROM runs WHERE id = ANY($1)', [
          ids,
        ]);
        expect(
          row?.n,
          runners
            .map((r) => r.stderr() + r.stdout())
            .join('\n')
            .slice(-3000),
        ).toBe(0);
      },
      { timeout: 30_000, interval: 200 },
    );
    const [leftovers] = await reader.query<{ steps: number; attempts: number }[]>(
      'SELECT (SELECT count(*)::int FROM steps WHERE run_id = ANY($1)) AS steps, (SELECT count(*)::int FROM attempts WHERE run_id = ANY($1)) AS attempts',
      [ids],
    );
    expect(leftovers).toEqual({ steps: 0, attempts: 0 });
    expect((await reader.getRun(later))?.status).toBe('queued');

    // A runner logs its "pruned" line after the deletion commits: on a busy machine the line may
    // reach us a little after the rows are gone, so the sum is awaited (it must reach RUNS exactly).
    const pruned = (): number =>
      runners
        .flatMap((r) => r.jsonLines())
        .filter((line) => typeof line.msg === 'string' && line.msg.startsWith('pruned '))
        .reduce((sum, line) => sum + Number(line.runs), 0);
    await vi.waitFor(() => expect(pruned()).toBeGreaterThanOrEqual(RUNS), { timeout: 10_000, interval: 100 });
    expect(pruned()).toBe(RUNS);
    expect(runners.flatMap((r) => r.jsonLines()).filter((line) => line.level === 'error')).toEqual([]);

    const answer = await clients[1]!.prune({ olderThanMs: 0, dryRun: true });
    expect(answer.busy || answer.cursor === null).toBe(true);
  }, 120_000);
});
