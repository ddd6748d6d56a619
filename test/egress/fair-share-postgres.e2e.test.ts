import { afterAll, describe, it } from 'vitest';
import { postgresApiRunners } from '../qstash/postgres-runners.js';
import type { UpstashApp } from '../qstash/upstash-app.js';
import { FAIR_SHARE_OPTIONS, slowTargetLeavesOthersGoing } from './fair-share.js';

/** Finding 2 on PostgreSQL: the QStash worker claims with leases there; the share holds the same. */

const TOKEN = 'wf_egress_pg_token_0123456789';
const apps: UpstashApp[] = [];

const { runners } = postgresApiRunners({
  database: 'egress_fair_share',
  token: TOKEN,
  count: 1,
  runner: () => FAIR_SHARE_OPTIONS,
});

afterAll(async () => {
  for (const app of apps) await app.close();
});

describe('fair share per destination origin (PostgreSQL)', () => {
  it("calls to a target that never answers hold only its share of the delivery slots; another app's run completes", async () => {
    const { runner, url } = runners[0]!;
    await slowTargetLeavesOthersGoing({ runner, url, token: TOKEN }, apps);
  });
});
