import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { start, stop, type Child } from '../frameworks/harness.js';
import { unusedPort } from '../helpers/runner.js';
import { assertBuilt } from './cli-process.js';

/**
 * `npm run dev` stops everything it started, however its stop comes: npm → the dev starter
 * (scripts/dev-starter.js) → `wf dev` (the runner) → the Hono starter app (its own process group).
 * Each case starts the repository's own dev script (its build step left out: the suite runs on the
 * built dist/) on free ports, takes the process tree, stops one process of it the way a process
 * manager, an IDE or a CI timeout would, and then requires every process of the tree gone and
 * nothing listening on either port.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const STARTER = join(ROOT, 'scripts', 'dev-starter.js');
const work = mkdtempSync(join(tmpdir(), 'wf-dev-stop-'));
const children: Child[] = [];
/** Every pid a case saw, for the clean-up after a failed case (the app runs in a process group of its own). */
const seen = new Set<number>();

interface Proc {
  pid: number;
  ppid: number;
  state: string;
  args: string;
}

/** Every process on the machine (`ps`, as on Linux and macOS). */
function processes(): Proc[] {
  return execFileSync('ps', ['-A', '-o', 'pid=,ppid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => ({ pid: Number(match[1]), ppid: Number(match[2]), state: match[3]!, args: match[4]! }));
}

/** `root` and everything under it, as the tree is now. */
function tree(root: number): Proc[] {
  const all = processes();
  const found = all.filter((p) => p.pid === root);
  for (let i = 0; i < found.length; i++) found.push(...all.filter((p) => p.ppid === found[i]!.pid));
  return found;
}

/** Alive: listed and not a zombie (one whose parent died is reaped by init; ours by us). */
function living(pids: number[]): Proc[] {
  return processes().filter((p) => pids.includes(p.pid) && !p.state.startsWith('Z'));
}

function listening(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), done(true)));
    socket.once('error', () => done(false));
  });
}

async function until<T>(
  what: string,
  probe: () => T | Promise<T>,
  ok: (value: T) => boolean,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs / 1000} s; last: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An app folder whose `dev` script is the repository's own, minus the build, on free ports. */
async function devApp(): Promise<{ dir: string; ports: { runner: number; app: number } }> {
  const dir = mkdtempSync(join(work, 'app-'));
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { dev: string } }).scripts
    .dev;
  const dev = script.replace('npm run build', 'true').replace('scripts/dev-starter.js', JSON.stringify(STARTER));
  expect(dev, 'the dev script still runs the starter').toContain(STARTER);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'dev-stop', private: true, scripts: { dev } }));
  return { dir, ports: { runner: await unusedPort(), app: await unusedPort() } };
}

interface Running {
  /** The process tree under the process we spawned, once the app answers. */
  procs: Proc[];
  ports: { runner: number; app: number };
  child: Child;
}

/** Starts `npm run dev` (directly, or under `wrapper` that holds its stdin) and waits for the runner and the app to answer. */
async function startDev(wrapper?: 'node parent'): Promise<Running> {
  const { dir, ports } = await devApp();
  const args = ['run', 'dev', '--', '--no-tui', '--db', join(dir, 'dev.db'), '--token', 'wf_dev_stop_token'];
  const env = { WF_RUNNER_PORT: String(ports.runner), PORT: String(ports.app) };
  const child = wrapper
    ? // A process manager that gives npm a pipe as stdin, then dies; npm itself gets no signal.
      start(
        process.execPath,
        [
          '-e',
          `require('node:child_process').spawn('npm', ${JSON.stringify(args)}, { stdio: ['pipe', 'inherit', 'inherit'] }); setInterval(() => {}, 1e9);`,
        ],
        dir,
        env,
      )
    : start('npm', args, dir, env);
  children.push(child);
  await until(
    'the runner and the app answer',
    async () => [await listening(ports.runner), await listening(ports.app)],
    (up) => up.every(Boolean),
    60_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${child.output()}`);
  });
  // The app's process is up once its port answers: the whole tree is there.
  const procs = tree(child.process.pid!);
  for (const p of procs) seen.add(p.pid);
  expect(
    procs.some((p) => p.args.includes('dev-starter.js')),
    JSON.stringify(procs),
  ).toBe(true);
  expect(
    procs.some((p) => p.args.includes('templates/hono-node/src/server.ts')),
    JSON.stringify(procs),
  ).toBe(true);
  return { procs, ports, child };
}

/** Nothing of the tree is left and neither port answers. */
async function expectAllGone({ procs, ports, child }: Running): Promise<void> {
  const pids = procs.map((p) => p.pid);
  await until(
    'every process of `npm run dev` has exited',
    () => living(pids),
    (left) => left.length === 0,
    30_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message}\n${child.output()}`);
  });
  expect(await listening(ports.runner), `runner port ${ports.runner}`).toBe(false);
  expect(await listening(ports.app), `app port ${ports.app}`).toBe(false);
}

const pidOf = (procs: Proc[], match: (p: Proc) => boolean): number => procs.find(match)!.pid;

describe('npm run dev stops everything it started', () => {
  assertBuilt();

  afterEach(async () => {
    // Whatever a failed case left: its process groups (the app's is its own).
    for (const child of children.splice(0)) await stop(child);
    for (const { pid } of living([...seen])) process.kill(pid, 'SIGKILL');
    seen.clear();
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("kill -TERM of the npm process (a process manager, an IDE's stop button, a CI timeout)", async () => {
    const dev = await startDev();
    process.kill(dev.child.process.pid!, 'SIGTERM');
    await expectAllGone(dev);
  });

  it('kill -INT and kill -HUP of the npm process', async () => {
    for (const signal of ['SIGINT', 'SIGHUP'] as const) {
      const dev = await startDev();
      process.kill(dev.child.process.pid!, signal);
      await expectAllGone(dev);
    }
  });

  it("kill -TERM of npm's parent, which held its stdin (npm itself gets no signal)", async () => {
    const dev = await startDev('node parent');
    process.kill(dev.child.process.pid!, 'SIGTERM');
    await expectAllGone(dev);
  });

  it('kill -KILL of npm: the starter sees its parent gone', async () => {
    const dev = await startDev();
    process.kill(dev.child.process.pid!, 'SIGKILL');
    await expectAllGone(dev);
  });

  it('kill -KILL of wf dev itself: its watchdog stops the app, and the starter and npm follow wf dev', async () => {
    const dev = await startDev();
    process.kill(
      pidOf(dev.procs, (p) => p.args.includes('dist/cli/index.js') && / dev( |$)/.test(p.args)),
      'SIGKILL',
    );
    await expectAllGone(dev);
  });

  it("kill -KILL of wf dev's parent (the starter): wf dev sees it gone and stops its app", async () => {
    const dev = await startDev();
    process.kill(
      pidOf(dev.procs, (p) => p.args.includes('dev-starter.js')),
      'SIGKILL',
    );
    await expectAllGone(dev);
  });
});
