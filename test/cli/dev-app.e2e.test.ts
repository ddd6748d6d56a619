import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unusedPort } from '../helpers/runner.js';
import {
  alive,
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
 * `wf dev -- node tiny-app.mjs`: wf dev starts the app as its child, hands it the runner's
 * variables, relays its output as `[app] …` lines, checks its route with a signed probe (and says
 * what is wrong when it does not answer), keeps the runner up when the app exits, and stops the
 * app's whole process group on Ctrl-C.
 */

const TOKEN = 'T';

/** `wf dev --no-tui` in a fresh folder with the tiny app as its child, on a free port. */
async function devWithApp(
  options: { flags?: string[]; appEnv?: NodeJS.ProcessEnv; port?: number; route?: string } = {},
): Promise<{ dev: Cli; port: number; dir: string }> {
  const port = options.port ?? (await unusedPort());
  const dir = tempDir();
  const flags = [
    'dev',
    '--no-tui',
    '--port',
    '0',
    '--token',
    TOKEN,
    '--app-port',
    String(port),
    '--route',
    options.route ?? '/workflow',
    ...(options.flags ?? []),
  ];
  const dev = spawnCli([...flags, '--', process.execPath, TINY_APP], dir, baseEnv(options.appEnv));
  return { dev, port, dir };
}

async function startRun(url: string): Promise<string> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"text":"hello"}',
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { workflowRunId: string }).workflowRunId;
}

beforeAll(assertBuilt);

afterAll(async () => {
  await killAllCli();
  removeTempDirs();
});

describe('wf dev runs the app as its child', () => {
  let dev: Cli;
  let port: number;
  let runnerUrl: string;

  beforeAll(async () => {
    ({ dev, port } = await devWithApp({ appEnv: { APP_GRANDCHILD: '1' } }));
    runnerUrl = await runnerUrlOf(dev);
  });

  it('injects WF_TOKEN, WF_RUNNER_URL and PORT, and relays stdout and stderr as [app] lines', async () => {
    const [line] = await untilOutput(dev, /^\[app\] env .*$/m);
    expect(line).toBe(`[app] env WF_TOKEN=${TOKEN} WF_RUNNER_URL=${runnerUrl} WF_WORKFLOW_URL=- PORT=${port}`);
    await untilOutput(dev, /^\[app\] a line on stderr$/m);
    expect(dev.stdout).toContain(
      `wf dev: starting the app: ${process.execPath} ${TINY_APP} (with WF_TOKEN, WF_RUNNER_URL)`,
    );
  });

  it('probes the route once the port answers and says the app is fine', async () => {
    await untilOutput(dev, new RegExp(`^wf dev: app ok: http://127\\.0\\.0\\.1:${port}/workflow \\(node\\)$`, 'm'));
    expect(dev.stdout).toContain(`wf dev: waiting for the app on port ${port}…`);
    expect(dev.stdout).not.toMatch(/warning|error/);
  });

  it('a run started at the app completes; the step prints in the app and the run in wf dev', async () => {
    const id = await startRun(`http://127.0.0.1:${port}/workflow`);
    await untilOutput(dev, /^\[app\] step ran: HELLO$/m);
    await untilOutput(dev, new RegExp(`${id} ✓ run completed · 2 steps`));
  });

  it('Ctrl-C stops the app and everything it started (SIGINT, then SIGTERM for what ignores it), then the runner', async () => {
    const grandchild = Number((await untilOutput(dev, /^\[app\] grandchild pid (\d+)$/m))[1]);
    const app = Number((await untilOutput(dev, /^\[app\] app pid (\d+)$/m))[1]);
    expect(alive(grandchild)).toBe(true);
    expect(await interrupt(dev), dev.stderr).toBe(0);
    expect(dev.stdout).toMatch(/wf dev: stopping…\n(.*\n)*\[app\] app got SIGINT, closing/);
    // The grandchild ignores SIGINT: only the SIGTERM to the group, after the grace period, ends it.
    expect(alive(app)).toBe(false);
    expect(alive(grandchild)).toBe(false);
    expect(dev.stderr).toBe('');
  }, 20_000);
});

describe('wf dev explains an app that does not answer as it should', () => {
  it('nothing on the port: names the port and --app-port', async () => {
    const other = await unusedPort();
    // The app listens elsewhere (its own PORT wins over the one wf dev would give it).
    const { dev, port } = await devWithApp({ appEnv: { PORT: String(other) }, flags: ['--app-wait', '2'] });
    await untilOutput(dev, new RegExp(`\\[app\\] app listening on http://127\\.0\\.0\\.1:${other}/workflow`));
    await untilOutput(
      dev,
      new RegExp(
        `^wf dev: error: nothing listens on port ${port} \\(is the app's dev server on another port\\? --app-port\\)$`,
        'm',
      ),
      10_000,
    );
    expect(await interrupt(dev)).toBe(0);
  });

  it('no route at the path: names the path and --route', async () => {
    const { dev, port } = await devWithApp({ route: '/api/nope' });
    await untilOutput(
      dev,
      new RegExp(
        `^wf dev: error: no workflow route at /api/nope on port ${port} \\(the app answered 404; --route sets the path\\)$`,
        'm',
      ),
    );
    expect(await interrupt(dev)).toBe(0);
  });

  it("another token in the app: says the tokens differ, with the app's own words", async () => {
    const { dev } = await devWithApp({ appEnv: { APP_TOKEN: 'not-the-runners' } });
    const [line] = await untilOutput(
      dev,
      /^wf dev: error: the app's WF_TOKEN differs from the runner's \(the app said: .*\)$/m,
    );
    expect(line).toContain('Invalid signature');
    expect(await interrupt(dev)).toBe(0);
  });

  it('an app that names another URL for itself: warns that the runner would call it there', async () => {
    const { dev, port } = await devWithApp({ appEnv: { APP_BASE_URL: 'http://localhost:1' } });
    await untilOutput(dev, /^wf dev: app ok: http:\/\/localhost:1\/workflow \(node\)$/m);
    await untilOutput(
      dev,
      new RegExp(
        `^wf dev: warning: the app will give the runner http://localhost:1/workflow, but it answers at http://localhost:${port}/workflow`,
        'm',
      ),
    );
    expect(await interrupt(dev)).toBe(0);
  });
});

describe('wf dev when the app ends by itself', () => {
  it('says so with the exit code, and the runner stays up until Ctrl-C', async () => {
    const { dev } = await devWithApp({ appEnv: { APP_EXIT: '3' } });
    const runnerUrl = await runnerUrlOf(dev);
    await untilOutput(
      dev,
      /^wf dev: warning: the app \(.*tiny-app\.mjs\) exited with code 3; the runner keeps running \(Ctrl-C stops wf dev\)$/m,
    );
    expect((await fetch(`${runnerUrl}/healthz`)).status).toBe(200);
    expect(dev.stdout).not.toContain('nothing listens');
    expect(await interrupt(dev)).toBe(0);
  });

  it('a command that does not exist: says it could not start', async () => {
    const dir = tempDir();
    const dev = spawnCli(
      ['dev', '--no-tui', '--port', '0', '--token', TOKEN, '--', 'wf-no-such-command-here'],
      dir,
      baseEnv(),
    );
    await untilOutput(
      dev,
      /^wf dev: warning: the app \(wf-no-such-command-here\) could not start: spawn wf-no-such-command-here ENOENT/m,
    );
    expect(await interrupt(dev)).toBe(0);
  });
});

describe('wf dev reads the app from package.json ("wfkit", as wf init writes it)', () => {
  it('starts "wfkit".dev through the shell and checks "wfkit".port and "wfkit".route', async () => {
    const dir = tempDir();
    const port = await unusedPort();
    const command = `"${process.execPath}" "${TINY_APP}"`;
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'app', wfkit: { dev: command, port, route: '/workflow' } }),
    );
    const dev = spawnCli(['dev', '--no-tui', '--port', '0', '--token', TOKEN], dir, baseEnv());
    await untilOutput(dev, new RegExp(`^wf dev: app ok: http://127\\.0\\.0\\.1:${port}/workflow \\(node\\)$`, 'm'));
    expect(dev.stdout).toContain(`wf dev: starting the app: ${command} (with WF_TOKEN, WF_RUNNER_URL)`);
    const id = await startRun(`http://127.0.0.1:${port}/workflow`);
    await untilOutput(dev, new RegExp(`${id} ✓ run completed`));
    const app = Number((await untilOutput(dev, /^\[app\] app pid (\d+)$/m))[1]);
    expect(await interrupt(dev)).toBe(0);
    expect(alive(app)).toBe(false);
  });

  it('--no-app starts nothing but still checks the port', async () => {
    const dir = tempDir();
    const port = await unusedPort();
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'app', wfkit: { dev: 'exit 9', port, route: '/workflow' } }),
    );
    const dev = spawnCli(
      ['dev', '--no-tui', '--port', '0', '--token', TOKEN, '--no-app', '--app-wait', '1'],
      dir,
      baseEnv(),
    );
    await untilOutput(dev, new RegExp(`^wf dev: error: nothing listens on port ${port}`, 'm'));
    expect(dev.stdout).not.toContain('starting the app');
    expect(await interrupt(dev)).toBe(0);
  });

  it('a malformed "wfkit" field is a one-line error', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', wfkit: { port: 'three thousand' } }));
    const dev = spawnCli(['dev', '--no-tui', '--port', '0', '--token', TOKEN], dir, baseEnv());
    expect(await dev.exited).toBe(2);
    expect(dev.stderr.trim()).toBe(
      `wf: Expected "port" to be a port from 1 to 65535, got "three thousand" in the "wfkit" field of ${join(dir, 'package.json')}.`,
    );
  });
});

describe('wf dev without an app', () => {
  it('runs the runner alone, as before', async () => {
    const dev = spawnCli(['dev', '--no-tui', '--port', '0', '--token', TOKEN], tempDir(), baseEnv());
    const runnerUrl = await runnerUrlOf(dev);
    await untilOutput(dev, /waiting for runs/);
    expect(await interrupt(dev)).toBe(0);
    expect(dev.stdout.trim().split('\n')).toEqual([
      `wf dev: runner listening on ${runnerUrl} (SQLite .wf/dev.db)`,
      `wf dev: token from --token; apps need WF_TOKEN=${TOKEN} and WF_RUNNER_URL=${runnerUrl}`,
      'wf dev: waiting for runs (Ctrl-C stops)',
      'wf dev: stopping…',
    ]);
  });
});
