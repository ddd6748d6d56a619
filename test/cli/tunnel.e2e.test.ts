import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocaltunnelServer, type LocaltunnelServer } from '../helpers/localtunnel-server.js';
import { startTestRunner, TEST_TOKEN, unusedPort, waitForFinish, type TestRunner } from '../helpers/runner.js';
import {
  assertBuilt,
  baseEnv,
  interrupt,
  killAllCli,
  removeTempDirs,
  runnerUrlOf,
  spawnCli,
  tempDir,
  TINY_APP,
  untilOutput,
  type Cli,
} from './cli-process.js';

/**
 * `wf dev --tunnel` against a localtunnel-protocol server on 127.0.0.1 (test/helpers/
 * localtunnel-server.ts, a test double of localtunnel.me): a whole run goes client → tunnel → app
 * → runner, and the runner calls the app back through the public URL (WF_WORKFLOW_URL); the
 * tunnel comes back after the service drops it; an unreachable service is one clear line; and
 * `--remote` drives the local app from a runner elsewhere.
 */

const TOKEN = 'T';
let lt: LocaltunnelServer;

interface RunView {
  run: { status: string; url: string };
  steps: { name: string; status: string }[];
}

async function startRun(url: string, text = 'hello'): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text }),
  });
  const body = await response.text();
  expect(response.status, body).toBe(200);
  return (JSON.parse(body) as { workflowRunId: string }).workflowRunId;
}

/** Reads the run from the runner API until it is finished (bounded). */
async function finished(runnerUrl: string, id: string): Promise<RunView> {
  const deadline = Date.now() + 15_000;
  let last: RunView | undefined;
  while (Date.now() < deadline) {
    last = (await (await fetch(`${runnerUrl}/v1/runs/${id}`)).json()) as RunView;
    if (['completed', 'failed', 'cancelled'].includes(last.run.status)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Run ${id} did not finish in 15 s: ${JSON.stringify(last)}`);
}

/** `wf dev --tunnel-host <the test server>` with the tiny app as its child. */
async function devWithTunnel(
  extra: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<{ dev: Cli; port: number; publicUrl: string; dir: string }> {
  const port = await unusedPort();
  const dir = tempDir('wf-tunnel-');
  const args = [
    'dev',
    '--no-tui',
    '--port',
    '0',
    '--token',
    TOKEN,
    '--app-port',
    String(port),
    '--route',
    '/workflow',
    '--tunnel-host',
    lt.url,
    ...extra,
  ];
  const dev = spawnCli([...args, '--', process.execPath, TINY_APP], dir, baseEnv(env));
  const publicUrl = (
    await untilOutput(dev, /^wf dev: tunnel open: (\S+) → localhost:\d+ \(the app gets it as WF_WORKFLOW_URL\)$/m)
  )[1]!;
  return { dev, port, publicUrl, dir };
}

beforeAll(async () => {
  assertBuilt();
  lt = await startLocaltunnelServer();
});

afterAll(async () => {
  await killAllCli();
  await lt?.close();
  removeTempDirs();
});

describe('wf dev --tunnel: a whole run through the tunnel', () => {
  let dev: Cli;
  let publicUrl: string;
  let runnerUrl: string;

  beforeAll(async () => {
    ({ dev, publicUrl } = await devWithTunnel());
    runnerUrl = await runnerUrlOf(dev);
  });

  afterAll(async () => {
    if (dev) expect(await interrupt(dev)).toBe(0);
  });

  it('prints the public URL, gives it to the app as WF_WORKFLOW_URL, and checks the route on the port and through the tunnel', async () => {
    expect(publicUrl).toMatch(new RegExp(`^${lt.url}/t/[0-9a-z]+$`));
    await untilOutput(dev, new RegExp(`^wf dev: POST ${publicUrl}/workflow starts a run$`, 'm'));
    await untilOutput(
      dev,
      new RegExp(`^\\[app\\] env WF_TOKEN=${TOKEN} WF_RUNNER_URL=${runnerUrl} WF_WORKFLOW_URL=${publicUrl} `, 'm'),
    );
    // The app resolves its public URL from WF_WORKFLOW_URL: what the runner will call.
    await untilOutput(dev, new RegExp(`^wf dev: app ok: ${publicUrl}/workflow \\(node\\)$`, 'm'));
    await untilOutput(dev, new RegExp(`^wf dev: the app answers through the tunnel at ${publicUrl}/workflow$`, 'm'));
    expect(dev.stdout).not.toMatch(/warning|error/);
  });

  it('client → tunnel → app → runner, and the runner drives the app back through the public URL', async () => {
    const id = await startRun(`${publicUrl}/workflow`);
    const { run, steps } = await finished(runnerUrl, id);
    expect(run).toMatchObject({ status: 'completed', url: `${publicUrl}/workflow` });
    expect(steps.map((s) => [s.name, s.status])).toEqual([
      ['initial-step', 'succeeded'],
      ['second-step', 'succeeded'],
    ]);
    await untilOutput(dev, /^\[app\] step ran: HELLO$/m);
  });

  it('sockets cut by the service are reopened by the client, and runs still go through', async () => {
    const id = publicUrl.split('/').at(-1)!;
    lt.dropSockets(id);
    const run = await startRun(`${publicUrl}/workflow`, 'after drop');
    expect((await finished(runnerUrl, run)).run.status).toBe('completed');
  });

  it('when the service forgets the tunnel (a restart), wf dev registers again under the same name, and runs go through', async () => {
    const id = publicUrl.split('/').at(-1)!;
    const from = dev.stdout.length;
    await lt.forget(id);
    await untilOutput(
      dev,
      /^wf dev: warning: the tunnel dropped \(connection refused: .*: the service no longer has this tunnel\); reconnecting$/m,
      10_000,
      from,
    );
    await untilOutput(dev, /^wf dev: tunnel: reconnecting, attempt 1 of 10 in 0\.5 s$/m, 10_000, from);
    await untilOutput(dev, new RegExp(`^wf dev: tunnel reconnected: ${publicUrl}$`, 'm'), 10_000, from);
    expect(lt.registrations.filter((name) => name === id)).toHaveLength(2);
    const run = await startRun(`${publicUrl}/workflow`, 'after reconnect');
    expect((await finished(runnerUrl, run)).run.status).toBe('completed');
  });
});

describe('wf dev --tunnel: failures', () => {
  it('an unreachable tunnel service is one line naming it and --tunnel-host; nothing is left running', async () => {
    const dead = `http://127.0.0.1:${await unusedPort()}`;
    const dir = tempDir('wf-tunnel-');
    const dev = spawnCli(
      [
        'dev',
        '--no-tui',
        '--port',
        '0',
        '--token',
        TOKEN,
        '--app-port',
        '3999',
        '--tunnel-host',
        dead,
        '--',
        process.execPath,
        TINY_APP,
      ],
      dir,
      baseEnv(),
    );
    expect(await dev.exited).toBe(1);
    expect(dev.stderr.trim()).toMatch(
      new RegExp(
        `^wf: Cannot reach the tunnel service at ${dead}: connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+ \\(offline\\? use --tunnel-host for a self-hosted server\\)$`,
      ),
    );
    expect(dev.stdout).not.toContain('starting the app');
  });

  it('--tunnel without the app port says what to pass', async () => {
    const dev = spawnCli(
      ['dev', '--no-tui', '--port', '0', '--token', TOKEN, '--tunnel'],
      tempDir('wf-tunnel-'),
      baseEnv(),
    );
    expect(await dev.exited).toBe(2);
    expect(dev.stderr.trim()).toBe(
      `wf: --tunnel needs the app's port: pass --app-port (\`wf init\` records it in package.json as "wfkit": { "port" }).`,
    );
  });

  it('an app that pins its baseUrl is told that the runner would not use the tunnel', async () => {
    const { dev } = await devWithTunnel([], { APP_BASE_URL: 'http://localhost:1234' });
    await untilOutput(
      dev,
      /^wf dev: warning: the app will give the runner http:\/\/localhost:1234\/workflow, not the tunnel's .* it does not use WF_WORKFLOW_URL/m,
    );
    expect(await interrupt(dev)).toBe(0);
  });
});

describe('wf dev --remote: a runner elsewhere drives the local app through the tunnel', () => {
  let remote: TestRunner;

  beforeAll(async () => {
    remote = await startTestRunner();
  });

  afterAll(async () => {
    await remote?.close();
  });

  it('runs no local runner, gives the app the remote URL, and follows the remote runner', async () => {
    const port = await unusedPort();
    const dir = tempDir('wf-remote-');
    const args = [
      'dev',
      '--no-tui',
      '--remote',
      remote.url,
      '--token',
      TEST_TOKEN,
      '--app-port',
      String(port),
      '--route',
      '/workflow',
      '--tunnel-host',
      lt.url,
    ];
    const dev = spawnCli([...args, '--', process.execPath, TINY_APP], dir, baseEnv());
    expect(await runnerUrlOf(dev)).toBe(remote.url);
    expect(dev.stdout).toContain(`wf dev: using the runner at ${remote.url} (remote)`);
    const publicUrl = (await untilOutput(dev, /^wf dev: tunnel open: (\S+) →/m))[1]!;
    await untilOutput(
      dev,
      new RegExp(
        `^\\[app\\] env WF_TOKEN=${TEST_TOKEN} WF_RUNNER_URL=${remote.url} WF_WORKFLOW_URL=${publicUrl} `,
        'm',
      ),
    );
    await untilOutput(dev, new RegExp(`^wf dev: the app answers through the tunnel at ${publicUrl}/workflow$`, 'm'));

    const id = await startRun(`${publicUrl}/workflow`);
    const { run, steps } = await waitForFinish(remote.runner, id);
    expect(run.status).toBe('completed');
    expect(run.url).toBe(`${publicUrl}/workflow`);
    expect(steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    // The remote runner's events, over its API, as plain lines.
    await untilOutput(dev, new RegExp(`${id} ✓ run completed · 2 steps`));
    expect(existsSync(join(dir, '.wf'))).toBe(false);
    expect(await interrupt(dev)).toBe(0);
  });

  it('a token the remote runner refuses is one line, before anything starts', async () => {
    const dev = spawnCli(
      ['dev', '--no-tui', '--remote', remote.url, '--token', 'wrong', '--', process.execPath, TINY_APP],
      tempDir('wf-remote-'),
      baseEnv(),
    );
    expect(await dev.exited).toBe(1);
    expect(dev.stderr.trim()).toBe(
      `wf: The runner at ${remote.url} refused the token: pass its token with --token or WF_TOKEN (the app gets the same one).`,
    );
    expect(dev.stdout).not.toContain('starting the app');
  });

  it('without --tunnel, warns that the remote runner cannot call the app on loopback', async () => {
    const port = await unusedPort();
    const args = [
      'dev',
      '--no-tui',
      '--remote',
      remote.url,
      '--token',
      TEST_TOKEN,
      '--app-port',
      String(port),
      '--route',
      '/workflow',
    ];
    const dev = spawnCli([...args, '--', process.execPath, TINY_APP], tempDir('wf-remote-'), baseEnv());
    await untilOutput(
      dev,
      new RegExp(
        `^wf dev: warning: the remote runner cannot call http://127\\.0\\.0\\.1:${port}/workflow \\(a loopback address of this machine\\): add --tunnel$`,
        'm',
      ),
    );
    expect(await interrupt(dev)).toBe(0);
  });
});
