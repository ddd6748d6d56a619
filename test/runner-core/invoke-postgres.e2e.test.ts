import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeValue } from '../../protocol/values.js';
import { Runner } from '../../runner-core/runner.js';
import { openPostgresStore, type PostgresStore } from '../../runner-core/store/postgres/store.js';
import type { Workflow } from '../../serve/core/handler.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { Counter, startApp, TEST_TOKEN, waitForFinish, waitForRun, type TestApp } from '../helpers/runner.js';

/**
 * `context.invoke` on PostgreSQL with two runners sharing the database (no new server-side
 * function: the links are fields every run and step has). One runner stops while children run;
 * every parent still completes once, with exactly one child each.
 */

const PARENTS = 12;

let pg: PostgresCluster | undefined;
let app: TestApp | undefined;
const stores: PostgresStore[] = [];
const runners: Runner[] = [];
/** Child step executions by parent number: at least once each (a stopped runner's may repeat). */
const childExecutions = new Counter();

beforeAll(async () => {
  pg = await startPostgres({ database: 'invoke' });
}, 300_000);

afterAll(async () => {
  for (const runner of runners) await runner.stop(0);
  for (const store of stores) await store.close();
  await app?.close();
  await pg?.stop();
});

async function startRunner(): Promise<Runner> {
  const store = await openPostgresStore(pg!.url);
  stores.push(store);
  const runner = new Runner({ store, tokens: [TEST_TOKEN], leaseMs: 1_000, pollMs: 50 });
  runners.push(runner);
  await runner.start();
  return runner;
}

describe('context.invoke on PostgreSQL with two runners', () => {
  it('every parent resumes once with its one child, though a runner stops while children run', async () => {
    const workflow: Workflow<{ n: number; child?: boolean }> = async (context) => {
      const { n, child } = context.requestPayload;
      if (child) {
        return context.run('work', async () => {
          childExecutions.hit(String(n));
          await new Promise((resolve) => setTimeout(resolve, 150));
          return n * 10;
        });
      }
      const result = await context.invoke<number>('child', { url: context.url, body: { n, child: true } });
      return result.body + 1;
    };
    const a = await startRunner();
    await startRunner();
    app = await startApp(workflow, { token: TEST_TOKEN, runnerUrl: 'http://127.0.0.1:9', retryDelay: 10 });
    const ids: string[] = [];
    for (let n = 0; n < PARENTS; n++)
      ids.push(
        (
          await a.startRun({
            url: app.url,
            body: JSON.stringify({ n }),
            headers: { 'content-type': 'application/json' },
          })
        ).run.id,
      );
    // Children are running: stop one runner (its leases lapse; the other takes its runs over).
    await waitForRun(stores[0]!, ids[0]!, (r) => r.status === 'waiting');
    await a.stop(0);
    for (const [n, id] of ids.entries()) {
      const { run } = await waitForFinish(stores[1]!, id, 20_000);
      expect(run.status).toBe('completed');
      expect(decodeValue(run.output ?? undefined)).toBe(n * 10 + 1);
    }
    const all = (await stores[1]!.listRuns({ limit: 100 })).runs;
    expect(all).toHaveLength(PARENTS * 2);
    expect(all.every((r) => r.status === 'completed')).toBe(true);
    const children = all.filter((r) => r.idempotencyKey?.startsWith('invoke:'));
    expect(new Set(children.map((r) => r.idempotencyKey)).size).toBe(PARENTS);
    for (let n = 0; n < PARENTS; n++) expect(childExecutions.counts.get(String(n))).toBeGreaterThanOrEqual(1);
    for (const id of ids) {
      const attempts = await stores[1]!.listAttempts(id);
      expect(attempts.filter((x) => x.outcome === 'done')).toHaveLength(1);
    }
  }, 60_000);
});
