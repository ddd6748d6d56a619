import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe } from 'vitest';
import { assertBuilt, interrupt, killAllCli, spawnCli, untilOutput, type Cli } from '../../cli/cli-process.js';
import { run, start, stop, waitUntilServing, type Child } from '../../frameworks/harness.js';
import { unusedPort } from '../../helpers/runner.js';
import { spawnWfStart, type WfStartProcess } from '../../runner-core/wf-start-process.js';
import { qstashToken } from '../../../runner-core/qstash/qstash-token.js';
import { describeUpstashFidelity } from '../fidelity-scenarios.js';
import { describeUpstashFeatures, type UpstashHarness } from '../scenarios.js';
import { describeUpstashWebhooks } from '../scenarios-webhooks.js';
import { upstashAppAt } from '../upstash-app.js';
import { writeHostApp, type HostApp } from './hosts.js';

/**
 * One host (Next.js, a Cloudflare Worker) of the Upstash proof: its app written and installed from
 * npm into a temp folder, the runner started (`wf start`, or `wf dev` which writes the app's env
 * file), the host's own dev server on 127.0.0.1 (a free port), and every feature scenario against it.
 */

const OUTPUT_TAIL = 6_000;

export function describeUpstashHost(label: string, host: () => HostApp, runnerKind: 'wf start' | 'wf dev'): void {
  describe(`${label} under ${runnerKind}`, () => {
    let work = '';
    let app = '';
    let runner: WfStartProcess | undefined;
    let dev: Cli | undefined;
    let server: Child | undefined;
    let harness: UpstashHarness;

    beforeAll(async () => {
      assertBuilt();
      const spec = host();
      work = mkdtempSync(join(tmpdir(), 'wfkit-upstash-host-'));
      app = join(work, 'app');
      writeHostApp(app, spec);
      await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], app, 600_000);
      const port = await unusedPort();
      const publicUrl = `http://localhost:${port}`;

      let values: Record<string, string>;
      if (runnerKind === 'wf start') {
        const token = `wf_${randomBytes(32).toString('hex')}`;
        const keys = {
          QSTASH_CURRENT_SIGNING_KEY: `sig_${randomBytes(24).toString('base64url')}`,
          QSTASH_NEXT_SIGNING_KEY: `sig_${randomBytes(24).toString('base64url')}`,
        };
        runner = await spawnWfStart(['--database', join(work, 'runner.db')], {
          WF_TOKENS: token,
          WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*,http://localhost:*',
          ...keys,
        });
        // The app's token wrapped as QStash issues them (its SDK decodes it for webhooks); the harness's stays plain.
        values = { QSTASH_URL: runner.url, QSTASH_TOKEN: token, ...keys, UPSTASH_WORKFLOW_URL: publicUrl };
        writeFileSync(
          join(app, spec.envFile),
          Object.entries({ ...values, QSTASH_TOKEN: qstashToken(token) })
            .map(([k, v]) => `${k}=${v}`)
            .join('\n') + '\n',
        );
      } else {
        // `wf dev` recognizes the Upstash app and writes the values into the host's env file itself.
        dev = spawnCli(
          [
            'dev',
            '--no-tui',
            '--port',
            '0',
            '--no-app',
            '--app-wait',
            '1',
            '--app-port',
            String(port),
            '--route',
            '/workflows/two-steps',
            '--write-upstash-env',
          ],
          app,
          {
            ...Object.fromEntries(
              Object.entries(process.env).filter(([k]) => !/^(QSTASH_|UPSTASH_|WF_|SERVICE_)/.test(k)),
            ),
            NO_COLOR: '1',
          },
        );
        await untilOutput(dev, new RegExp(`${spec.envFile.replace('.', '\\.')}: `), 30_000);
        const { parseEnv } = await import('node:util');
        values = parseEnv(readFileSync(join(app, spec.envFile), 'utf8')) as Record<string, string>;
      }

      server = start('npm', ['run', 'dev', '--', ...spec.devArgs(port)], app);
      await waitUntilServing(server, `http://127.0.0.1:${port}/counters`, 180_000);
      const output = (): string => server!.output().slice(-OUTPUT_TAIL);
      harness = {
        runnerUrl: values.QSTASH_URL!,
        token: values.QSTASH_TOKEN!,
        app: upstashAppAt(`http://127.0.0.1:${port}`, values.UPSTASH_WORKFLOW_URL ?? publicUrl, output, async () => {}),
      };
    }, 900_000);

    afterAll(async () => {
      if (server) await stop(server);
      if (runner?.running()) runner.child.kill('SIGTERM');
      await runner?.exited;
      if (dev) await interrupt(dev);
      await killAllCli();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    describeUpstashFeatures(`${label} (${runnerKind})`, () => harness, { directPost: false });
    // Issue 21's details and webhooks, on the hosts that serve the fidelity proof as the Hono app does.
    if (host().fidelity) {
      describeUpstashFidelity(`${label} (${runnerKind})`, () => harness);
      describeUpstashWebhooks(`${label} (${runnerKind})`, () => harness);
    }
  });
}
