import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../../serve/adapters/node.js';
import { requireSystemDependency } from '../setup/system-deps.js';

/**
 * `wf dev` in a real terminal: tmux runs it in a 120×40 pane, the test starts runs on an app in
 * this process, types keys with `send-keys` and reads the screen with `capture-pane`.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ARTIFACTS = join(ROOT, 'test', 'artifacts');
const CLI = join(ROOT, 'dist', 'cli', 'index.js');
const TOKEN = 'T';
// A tmux server of our own (not the user's), its socket in a temp folder removed at the end.
const SOCKET_DIR = mkdtempSync(join(tmpdir(), 'wf-tui-tmux-'));
const SOCKET = join(SOCKET_DIR, 'tmux.sock');
const SESSION = 'dash';
const run = promisify(execFile);

const tmux = async (...args: string[]): Promise<string> => (await run('tmux', ['-S', SOCKET, ...args])).stdout;
const screen = (target = SESSION, ...flags: string[]): Promise<string> =>
  tmux('capture-pane', '-p', ...flags, '-t', target);
const keys = (...keys: string[]): Promise<string> => tmux('send-keys', '-t', SESSION, ...keys);
const type = (text: string): Promise<string> => tmux('send-keys', '-t', SESSION, '-l', text);

/** Polls the screen until `expected` holds (bounded); returns that screen. */
async function until(
  expected: RegExp | string | ((screen: string) => boolean),
  target = SESSION,
  timeoutMs = 15_000,
): Promise<string> {
  const test =
    typeof expected === 'function'
      ? expected
      : (s: string) => (typeof expected === 'string' ? s.includes(expected) : expected.test(s));
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    last = await screen(target);
    if (test(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`The screen never showed ${String(expected)}. Last screen:\n${last}`);
}

/** `wf dev` in a new tmux session (own temp folder), CI and runner variables cleared. */
async function startDev(session: string, env: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wf-tui-e2e-'));
  dirs.push(dir);
  const unset = [
    'CI',
    'CONTINUOUS_INTEGRATION',
    'WF_TOKEN',
    'SERVICE_TOKEN',
    'WF_RUNNER_URL',
    'NO_COLOR',
    'FORCE_COLOR',
  ]
    .map((name) => `-u ${name}`)
    .join(' ');
  // The shell stays after `wf dev` ends, so its last lines and exit status stay on screen.
  const command = `env ${unset} ${env} '${process.execPath}' '${CLI}' dev --port 0 --token ${TOKEN}; echo "[wf exited $?]"; sleep 600`;
  await tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '40', '-c', dir, command);
}

/** Keeps a screen as the terminal's "screenshot": test/artifacts/<name>.txt (CI artifacts; git ignores them). */
function saveScreen(name: string, text: string): void {
  const dir = join(ROOT, 'test', 'artifacts');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name}.txt`), text);
}

const dirs: string[] = [SOCKET_DIR];
let runnerUrl: string;
let app: Server;
let appUrl: string;
let openGate!: () => void;
const gate = new Promise<void>((resolve) => (openGate = resolve));
let openFlowGate!: () => void;
const flowGate = new Promise<void>((resolve) => (openFlowGate = resolve));

const flaky = { broken: true, kept: 0 };

async function trigger(route: string): Promise<string> {
  const response = await fetch(appUrl + route, { method: 'POST', body: JSON.stringify({ text: 'hello' }) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { workflowRunId: string }).workflowRunId;
}

/** Narrows the list to one run with `/`, and leaves the prompt (enter). */
async function filterTo(id: string): Promise<void> {
  await keys('/');
  await until('enter keep · esc clear');
  await type(id.slice(-12));
  await until(
    (s) => s.includes(`/${id.slice(-12)}`) && s.split('\n').filter((line) => line.includes('wfr_')).length === 1,
  );
  await keys('Enter');
  await until(`filter "${id.slice(-12)}" · 1 of`);
}

const LIST_KEYS = '↑↓/jk move · enter open · / filter · c cancel · r rerun · R resume · q quit';
const atList = (s: string): boolean => /STATUS\s+RUN/.test(s) && s.trimEnd().split('\n').at(-1) === LIST_KEYS;

/** Back to the whole run list: esc (out of a step, a run, then the filter) until there. */
async function backToList(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    const before = await screen();
    if (atList(before)) return;
    await keys('Escape');
    await until((s) => s !== before);
  }
  await until(atList);
}

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before the end-to-end tests.`);
  requireSystemDependency('tmux');
  await startDev(SESSION, 'NO_COLOR=1');
  runnerUrl = (/wf dev · (http:\/\/127\.0\.0\.1:\d+) · ● live/.exec(await until(/● live/)) ?? [])[1]!;
  expect(runnerUrl).toBeDefined();

  const routes: Record<string, ReturnType<typeof serve>> = {};
  app = createServer((req, res) => {
    const route = routes[req.url ?? ''];
    if (route) void route(req, res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  // Told its public URL, so what it names does not depend on the Host the client sends.
  const options = { token: TOKEN, runnerUrl, baseUrl: appUrl };
  const twoStep = serve<{ text: string }>(async (context) => {
    const upper = await context.run('initial-step', () => context.requestPayload.text.toUpperCase());
    await context.run('second-step', async () => {
      // What a step prints is kept with it and shown in its step view (step logs).
      context.log('info', 'measured', { length: upper.length });
      return upper.length;
    });
  }, options);
  const failing = serve(
    async (context) => {
      await context.run('ok-step', () => ({ fine: true }));
      await context.run('explode', () => {
        throw new Error('boom: the database is on fire');
      });
    },
    { ...options, retries: 0 },
  );
  const gated = serve(async (context) => {
    await context.run('first', () => 1);
    await context.run('held', async () => (await gate, 2));
  }, options);
  // Fails at its second step until `flaky.broken` is cleared; counts each step's executions app-side.
  const flakyRoute = serve(
    async (context) => {
      await context.run('kept', () => (flaky.kept += 1));
      await context.run('flaky', () => {
        if (flaky.broken) throw new Error('flaky: not yet');
        return 'ok';
      });
    },
    { ...options, retries: 0 },
  );
  // One run of the key at a time: a second start waits, and says why.
  const flow = serve(
    async (context) => {
      await context.run('slot', async () => (await flowGate, 1));
    },
    { ...options, flowControl: { key: 'tenant-42', parallelism: 1 } },
  );
  Object.assign(routes, {
    '/workflow': twoStep,
    '/fail': failing,
    '/gated': gated,
    '/flaky': flakyRoute,
    '/flow': flow,
  });
});

afterAll(async () => {
  openGate();
  openFlowGate();
  await tmux('kill-server').catch(() => {});
  if (app) await new Promise<void>((resolve) => (app.closeAllConnections(), app.close(() => resolve())));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('wf dev on a terminal shows the dashboard', () => {
  it('starts on an empty run list, with the runner URL, the token for apps and the keys', async () => {
    const s = await screen();
    expect(s).toContain(`apps need WF_TOKEN=T (from --token) and WF_RUNNER_URL=${runnerUrl}`);
    expect(s).toContain('No runs yet');
    expect(atList(s)).toBe(true);
  });

  it('shows a run the moment it starts, then its steps, into its steps and back', async () => {
    const id = await trigger('/workflow');
    await until(new RegExp(`✓ completed\\s+${id} 127\\.0\\.0\\.1:\\d+/workflow .* 2$`, 'm'));
    await filterTo(id);
    await keys('Enter');
    await until(/›\s+0 initial-step\s+run\s+✓ succeeded\s+1 /);
    const view = await until(/1 second-step\s+run\s+✓ succeeded/);
    expect(view).toContain(`✓ completed  ${id}`);
    expect(view).toContain('payload  {"text":"hello"}');
    // 120 columns: a timeline bar per step, on the run's time axis, between the duration and the detail.
    expect(view).toMatch(/DURATION {2}TIMELINE\s+DETAIL/);
    expect(view).toMatch(/^started \d\d:\d\d:\d\d · queued \S+ · took /m);
    expect(view).toMatch(/0 initial-step\s+run\s+✓ succeeded\s+1\s+\S+ {2}[ █]*█/);
    expect(view).toMatch(/1 second-step\s+run\s+✓ succeeded\s+1\s+\S+ {2}[ █]*█/);
    saveScreen('tui-run-timeline', view);
    await keys('j');
    await until(/›\s+1 second-step/);
    await keys('Enter');
    const step = await until('Attempts · 1 of 1 drive requests concern this step');
    expect(step).toMatch(/^step 1 second-step {2}✓ succeeded · run/m);
    expect(step).toMatch(/^Output\n {2}5$/m);
    expect(step).toMatch(/^◆ attempt 1 · .* HTTP 200 · done$/m);
    expect(step).toContain('wf-signature: [redacted]');
    expect(step).toMatch(
      /^Logs · 1 attempt printed\n◇ attempt 1 · succeeded · 1 line\n {2}\d\d:\d\d:\d\d\.\d{3} info {2}measured length=5$/m,
    );
    await keys('Escape');
    await until(/›\s+1 second-step/);
    await backToList();
  });

  it('shows a failed run with its error, and the failing step with its stack', async () => {
    const id = await trigger('/fail');
    await until(new RegExp(`✗ failed\\s+${id}`));
    await filterTo(id);
    await keys('Enter');
    const view = await until(/1 explode\s+run\s+✗ failed\s+1 \(1✗\)/);
    expect(view).toContain('error  Error: boom: the database is on fire');
    // The failing execution's bar ends in a failure mark.
    expect(view).toMatch(/1 explode\s+run\s+✗ failed\s+1 \(1✗\)\s+\S+ {2}[ █]*✗/);
    saveScreen('tui-run-timeline-failed', view);
    await keys('j');
    await until(/›\s+1 explode/);
    await keys('Enter');
    const step = await until(/^Error\n {2}Error: boom: the database is on fire\n {4}at /m);
    expect(step).toMatch(/^◆ attempt 1 · .* failed: boom/m);
    await keys('NPage');
    await until(/^ {4}▶ \{"t":"failed"/m);
    await backToList();
  });

  it('/ with key:value terms searches the runner: step:explode lists the runs that failed there', async () => {
    const failed = [await trigger('/fail'), await trigger('/fail')];
    const ok = await trigger('/workflow');
    for (const id of failed) await until(new RegExp(`✗ failed\\s+${id}`));
    await until(new RegExp(`✓ completed\\s+${ok}`));
    await keys('/');
    await until('enter keep · esc clear · words, or status: url: step: id: since: until:');
    await type('step:explode');
    await keys('Enter');
    const rows = (s: string): string[] => s.split('\n').filter((line) => line.includes('wfr_'));
    const found = await until((s) => s.includes('the runner found') && failed.every((id) => s.includes(id)));
    expect(rows(found).length).toBeGreaterThanOrEqual(2);
    for (const row of rows(found)) expect(row).toContain('✗ failed');
    expect(found).not.toContain(ok);
    // The screen as text beside the browser screenshots (test/artifacts, kept by CI).
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(join(ARTIFACTS, 'tui-search-failed-step.txt'), found);
    await backToList();
  });

  it('c cancels the selected run, r starts it again', async () => {
    const id = await trigger('/gated');
    await until(new RegExp(`▶ running\\s+${id}`));
    await filterTo(id);
    await keys('c');
    await until(`✓ cancelled ${id}`);
    await until(new RegExp(`› ⊘ cancelled\\s+${id}`));
    const status = ((await (await fetch(`${runnerUrl}/v1/runs/${id}`)).json()) as { run: { status: string } }).run
      .status;
    expect(status).toBe('cancelled');
    await keys('r');
    const rerun = (/rerun of wfr_\w+ started: (wfr_\w+)/.exec(await until('rerun of')) ?? [])[1]!;
    expect(rerun).not.toBe(id);
    openGate();
    await backToList();
    await until(new RegExp(`✓ completed\\s+${rerun}`));
  });

  it('R resumes a failed run from its failed step: the step before it does not run again', async () => {
    const id = await trigger('/flaky');
    await until(new RegExp(`✗ failed\\s+${id}`));
    await filterTo(id);
    flaky.broken = false;
    await keys('R');
    await until(`resumed ${id} from its failed step`);
    await until(new RegExp(`› ✓ completed\\s+${id}`));
    expect(flaky.kept).toBe(1);
    await backToList();
  });

  it('draws no colour under NO_COLOR: the glyphs carry the status', async () => {
    const styled = await screen(SESSION, '-e');
    expect(styled).toMatch(/✓ completed|✗ failed/);
    expect(styled).not.toMatch(/\u001b\[(?:[\d;]*;)?(?:3[0-7]|9[0-7]|4[0-7]|38;|48;)[\d;]*m/);
  });

  it('says why a run waits on flow control', async () => {
    await backToList();
    const first = await trigger('/flow');
    await filterTo(first);
    await until((s) => s.includes(first) && s.includes('running'));
    await backToList();
    const second = await trigger('/flow');
    await filterTo(second);
    const waiting = await until('waiting: flow control `tenant-42`');
    expect(waiting).toContain(second);
    openFlowGate();
    await until((s) => s.includes(second) && s.includes('✓'));
    await backToList();
  });

  it('without NO_COLOR the same screen is coloured', async () => {
    await startDev('colour', '');
    await until(/● live/, 'colour');
    expect(await screen('colour', '-e')).toMatch(/\u001b\[(?:[\d;]*;)?32m● live/);
    await tmux('send-keys', '-t', 'colour', 'q');
    await until('[wf exited 0]', 'colour');
  });

  it('fits a narrow terminal after a resize', async () => {
    await tmux('resize-window', '-t', SESSION, '-x', '60', '-y', '20');
    const narrow = await until(
      (s) => s.trimEnd().split('\n').at(-1) === '↑↓ move enter open / filter c cancel r rerun R resume q quit',
    );
    const lines = narrow.trimEnd().split('\n');
    expect(lines.length).toBeLessThanOrEqual(20);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(60);
    expect(narrow).toMatch(/[✓✗⊘] wfr_\w{26} \/(workflow|fail|gated)/);
  });

  it('q quits and stops the runner cleanly', async () => {
    await keys('q');
    const after = await until('[wf exited', SESSION, 20_000);
    expect(after).toMatch(/^wf dev: stopping…\n\[wf exited 0\]$/m);
    await expect(fetch(`${runnerUrl}/healthz`)).rejects.toThrow();
  });
});

describe('wf dev without a terminal', () => {
  it('prints plain lines by itself when stdout is a pipe', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wf-tui-e2e-'));
    dirs.push(dir);
    const child = spawn(process.execPath, [CLI, 'dev', '--port', '0', '--token', TOKEN], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: string) => ((out += chunk), out.includes('waiting for runs') && resolve())),
    );
    const url = (/^wf dev: runner listening on (http:\/\/127\.0\.0\.1:\d+) /.exec(out) ?? [])[1];
    expect(url).toBeDefined();
    // Once it answers, it is past printing and waits for Ctrl-C (its SIGINT handler is set).
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    child.kill('SIGINT');
    expect(await closed).toBe(0);
    expect(out).toContain('wf dev: stopping');
  });
});
