import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../runner-core/store/postgres/store.js';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { closeStarted } from '../helpers/runner.js';
import { assertBuiltCli, spawnWfStart, type WfStartProcess } from './wf-start-process.js';

export type ThreeRunners = [WfStartProcess, WfStartProcess, WfStartProcess];

/**
 * A suite on a throw-away PostgreSQL cluster: `start()` spawns three `wf start` processes sharing
 * it and opens a store to read it with. After the suite, everything is stopped: the runners (a
 * SIGSTOPped or killed one included), the apps `startApp` started, the store, the cluster.
 */
export function postgresRunners(database: string): {
  /** `extra`: more flags and environment for every runner (the same for all three). */
  start(
    token: string,
    leaseMs: number,
    extra?: { args?: string[]; env?: Record<string, string> },
  ): Promise<{ runners: ThreeRunners; reader: PostgresStore }>;
} {
  let pg: PostgresCluster | undefined;
  let reader: PostgresStore | undefined;
  const runners: WfStartProcess[] = [];

  beforeAll(async () => {
    assertBuiltCli();
    pg = await startPostgres({ database });
  }, 300_000);

  afterAll(async () => {
    for (const r of runners) if (r.running()) r.child.kill('SIGKILL');
    await Promise.all(runners.map((r) => r.exited));
    await closeStarted();
    await reader?.close();
    await pg?.stop();
  });

  return {
    async start(token, leaseMs, extra = {}) {
      const args = [
        '--database',
        pg!.url,
        '--lease-ms',
        String(leaseMs),
        '--log-format',
        'json',
        '--grace-ms',
        '500',
        ...(extra.args ?? []),
      ];
      runners.push(...(await Promise.all([0, 1, 2].map(() => spawnWfStart(args, { WF_TOKENS: token, ...extra.env })))));
      reader = await openPostgresStore(pg!.url);
      return { runners: runners as ThreeRunners, reader };
    },
  };
}
