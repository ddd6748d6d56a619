import { afterEach } from 'vitest';
import { closeStarted, startTestRunner } from '../helpers/runner.js';
import { describeInvokeRefusals } from './invoke-refusals.js';
import { postgresApiRunners } from './postgres-runners.js';

/** Invoke requests that name a run the QStash engine may not write into, on SQLite and PostgreSQL (invoke-refusals.ts). */

afterEach(closeStarted);

const TOKEN = 'wf_invoke_refusals_token_0123';
const pg = postgresApiRunners({ database: 'qstash_invoke_refusals', token: TOKEN, count: 1 });

describeInvokeRefusals('sqlite', async () => {
  const started = await startTestRunner();
  return { runner: started.runner, url: started.url, token: started.token };
});

describeInvokeRefusals('postgres', async () => {
  const [first] = pg.runners;
  return { runner: first!.runner, url: first!.url, token: TOKEN };
});
