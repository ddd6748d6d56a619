import { describe, expect, it } from 'vitest';
import { Client } from '../../api/client.js';
import { verifyAlertSignature } from '../../runner-core/alerts/signature.js';
import { startApp, waitForRun } from '../helpers/runner.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { postgresRunners } from './postgres-runners.js';

/**
 * Failure alerts on PostgreSQL shared by three `wf start --alert-webhook` processes: every failed
 * run is alerted exactly once, whichever runner failed it and whichever delivers it, though the
 * receiver refuses the first deliveries (each refused one is tried again, by any runner).
 */

const TOKEN = 'wf_alerts_postgres_test_token';
const SECRET = 'alerts-postgres-secret-0123456789';
const RUNS = 20;
const REFUSED = 8;

const cluster = postgresRunners('alerts_runner');

describe('failure alerts on PostgreSQL with three wf start runners', () => {
  it('alerts each failed run exactly once, retrying refused deliveries', async () => {
    const hook = await startWebhookReceiver();
    hook.answer = (n) => ({ status: n <= REFUSED ? 503 : 200 });
    try {
      const { runners, reader } = await cluster.start(TOKEN, 2_000, {
        args: ['--alert-webhook', hook.url, '--public-url', 'https://wf.example.com'],
        env: { WF_ALERT_SECRET: SECRET },
      });
      const app = await startApp(
        async (context) => {
          await context.run('only', () => {
            throw new Error(`failed ${context.workflowRunId}`);
          });
        },
        { token: TOKEN, runnerUrl: runners[0].url, retries: 0 },
      );
      const clients = runners.map((r) => new Client({ runnerUrl: r.url, token: TOKEN }));
      const ids: string[] = [];
      for (let n = 0; n < RUNS; n++)
        ids.push((await clients[n % 3]!.trigger({ url: app.url, retries: 0 })).workflowRunId);
      for (const id of ids) await waitForRun(reader, id, (r) => r.alert === 'delivered', 60_000);

      const accepted = hook.accepted();
      expect(accepted.map((d) => d.runId).sort()).toEqual([...ids].sort());
      expect(hook.received.filter((r) => r.status === 503)).toHaveLength(REFUSED);
      for (const hit of hook.received)
        expect(verifyAlertSignature(hit.body, hit.headers['wf-alert-signature'] as string, SECRET)).toBe(true);
      for (const doc of accepted)
        expect(doc).toMatchObject({
          dashboardUrl: `https://wf.example.com/runs/${doc.runId}`,
          failedStep: { name: 'only' },
        });
      // Each run's log holds its deliveries: the refused ones, then the one that got through.
      let refusedLogged = 0;
      for (const id of ids) {
        const alerts = (await reader.listAttempts(id)).filter((a) => a.outcome.startsWith('alert'));
        expect(alerts.at(-1)).toMatchObject({ outcome: 'alert delivered', responseStatus: 200 });
        refusedLogged += alerts.filter((a) => a.outcome === 'alert error').length;
      }
      expect(refusedLogged).toBe(REFUSED);
      // The runners logged where they alert, without the webhook's path.
      for (const runner of runners) {
        const line = runner
          .jsonLines()
          .find((l) => typeof l.msg === 'string' && (l.msg as string).startsWith('alerting failed runs'));
        expect(line).toMatchObject({ alertWebhook: `http://127.0.0.1:${hook.port}`, signedWith: 'WF_ALERT_SECRET' });
        expect(runner.stdout()).not.toContain('/hook');
      }
    } finally {
      await hook.close();
    }
  });
});
