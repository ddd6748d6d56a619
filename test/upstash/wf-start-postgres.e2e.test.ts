import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import { startPostgres, type PostgresCluster } from '../helpers/postgres.js';
import { assertBuiltCli, spawnWfStart, type WfStartProcess } from '../runner-core/wf-start-process.js';
import { describeUpstashFidelity } from './fidelity-scenarios.js';
import { describeUpstashFeatures, type UpstashHarness } from './scenarios.js';
import { describeUpstashWebhooks } from './scenarios-webhooks.js';
import { qstashToken } from '../../runner-core/qstash/qstash-token.js';
import { startUpstashApp, type UpstashApp } from './upstash-app.js';

/**
 * The Upstash proof on PostgreSQL with two `wf start` runners sharing one database, as a production
 * cluster runs: the app's QSTASH_URL is runner A (its steps are published there), while the user's
 * script (Client.trigger, notify, cancel, logs, getWaiters) and the assertions go to runner B. Either
 * runner delivers; both must agree on every run, wait and message.
 */

const TOKEN = `wf_${randomBytes(32).toString('hex')}`;
const KEYS = {
  QSTASH_CURRENT_SIGNING_KEY: `sig_${randomBytes(24).toString('base64url')}`,
  QSTASH_NEXT_SIGNING_KEY: `sig_${randomBytes(24).toString('base64url')}`,
};

let pg: PostgresCluster | undefined;
const runners: WfStartProcess[] = [];
const apps: UpstashApp[] = [];
let harness: UpstashHarness;

beforeAll(async () => {
  assertBuiltCli();
  pg = await startPostgres({ database: 'wf_upstash' });
  const env = { WF_TOKENS: TOKEN, WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*', ...KEYS };
  // One after the other: the first applies the migrations.
  runners.push(await spawnWfStart(['--database', pg.url], env));
  runners.push(await spawnWfStart(['--database', pg.url], env));
  const [a, b] = runners as [WfStartProcess, WfStartProcess];
  const app = await startUpstashApp({ QSTASH_URL: a.url, QSTASH_TOKEN: qstashToken(TOKEN), ...KEYS });
  const openApp = await startUpstashApp({ QSTASH_URL: a.url, QSTASH_TOKEN: TOKEN });
  apps.push(app, openApp);
  harness = { runnerUrl: b.url, token: TOKEN, app, openApp };
}, 300_000);

afterAll(async () => {
  await Promise.all(apps.splice(0).map((app) => app.stop()));
  for (const r of runners) if (r.running()) r.child.kill('SIGTERM');
  await Promise.all(runners.map((r) => r.exited));
  await pg?.stop();
});

describeUpstashFeatures('two wf start runners on PostgreSQL', () => harness);
describeUpstashFidelity('two wf start runners on PostgreSQL', () => harness);
describeUpstashWebhooks('two wf start runners on PostgreSQL', () => harness);
