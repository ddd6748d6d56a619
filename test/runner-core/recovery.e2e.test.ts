import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { decodeValue } from '../../protocol/values.js';
import { openSqliteStore, type SqliteStore } from '../../runner-core/store/sqlite/store.js';
import { Counter, gate, startApp, startThroughApp, waitForRun, type TestApp } from '../helpers/runner.js';

/**
 * kill -9: the built `wf dev` runs as a child process, is SIGKILLed in the middle of a run, and a
 * new one on the same SQLite file finishes it. Committed steps never execute again; the step that
 * was executing when the runner died executes again (at-least-once) and the store counts it.
 */

const CLI = resolve(import.meta.dirname, '../../dist/cli/index.js');
const TOKEN = 'wf_recovery_test_token';
const STEPS = 10;
const HELD = 5;

let dir: string;
let dbPath: string;
let app: TestApp | undefined;
let reader: SqliteStore | undefined;
const children: ChildProcess[] = [];

const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

function exited(child: ChildProcess): Promise<void> {
  return running(child) ? new Promise((done) => child.once('exit', () => done())) : Promise.resolve();
}

/** Starts `wf dev` on the shared db file and resolves with the URL it prints. */
function startRunnerProcess(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'dev', '--no-tui', '--port', '0', '--db', dbPath, '--token', TOKEN], {
    cwd: dir,
    env: { ...process.env, WF_TOKEN: '', SERVICE_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  return new Promise((resolveUrl, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`wf dev printed no URL within 20 s.\nstdout: ${stdout}\nstderr: ${stderr}`)),
      20_000,
    );
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /runner listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolveUrl({ child, url: match[1]! });
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`wf dev exited (${code ?? signal}) before listening.\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

beforeAll(() => {
  if (!existsSync(CLI)) {
    throw new Error(
      `${CLI} is missing: run \`npm run build\` first (this test runs the built \`wf dev\` as a child process).`,
    );
  }
  dir = mkdtempSync(join(tmpdir(), 'wfkit-recovery-'));
  dbPath = join(dir, 'dev.db');
});

afterAll(async () => {
  for (const child of children) if (running(child)) child.kill('SIGKILL');
  await Promise.all(children.map(exited));
  await app?.close();
  await reader?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('recovery after kill -9', () => {
  it('finishes the run on a new runner: committed steps never run again, the held step at most twice', async () => {
    const first = await startRunnerProcess();
    const calls = new Counter();
    const heldStarted = gate();
    const release = gate();
    // The route's first drive response, cut off by the kill: the app must have seen it close (and
    // stopped that replay) before the held step returns, or the orphaned replay starts the next step.
    const firstDriveClosed = gate();
    let drives = 0;
    app = await startApp(
      async (context) => {
        for (let index = 0; index < STEPS; index++) {
          await context.run(`step-${index}`, async () => {
            calls.hit(index);
            if (index === HELD) {
              heldStarted.open();
              await release.promise;
            }
            return index;
          });
        }
      },
      {
        token: TOKEN,
        runnerUrl: first.url,
        retryDelay: 10,
        wrap: (handler) => (req, res) => {
          if (req.headers['wf-signature'] !== undefined && ++drives === 1) res.on('close', firstDriveClosed.open);
          handler(req, res);
        },
      },
    );
    const id = await startThroughApp(app.url);
    await heldStarted.promise;

    // A second connection to the same WAL file: wait until steps 0..4 are durable and step 5 is
    // recorded as started, so the kill lands mid-step with everything before it committed.
    reader = openSqliteStore(dbPath);
    await vi.waitFor(
      async () => {
        const steps = await reader!.listSteps(id);
        expect(steps.slice(0, HELD).every((s) => s.status === 'succeeded')).toBe(true);
        expect(steps[HELD]?.status).toBe('running');
      },
      { timeout: 10_000, interval: 10 },
    );
    first.child.kill('SIGKILL');
    await exited(first.child);
    expect(first.child.signalCode).toBe('SIGKILL');
    await firstDriveClosed.promise;
    release.open();

    const second = await startRunnerProcess();
    const run = await waitForRun(reader, id, (r) => r.finishedAt !== null, 20_000);
    expect(run).toMatchObject({ status: 'completed', stepsDone: STEPS, error: null });

    const steps = await reader.listSteps(id);
    expect(steps.map((s) => [s.index, s.name, s.status, decodeValue(s.output ?? undefined)])).toEqual(
      Array.from({ length: STEPS }, (_, i) => [i, `step-${i}`, 'succeeded', i]),
    );
    for (let i = 0; i < HELD; i++) expect(calls.of(i), `step ${i} (committed before the kill)`).toBe(1);
    for (let i = HELD + 1; i < STEPS; i++) expect(calls.of(i), `step ${i}`).toBe(1);
    const held = calls.of(HELD);
    expect(held).toBeGreaterThanOrEqual(1);
    expect(held).toBeLessThanOrEqual(2);
    expect(steps[HELD]!.reportedExecutions).toBe(held);
    for (const step of steps)
      if (step.index !== HELD) expect(step.reportedExecutions, `executions of step ${step.index}`).toBe(1);

    // The new runner stops cleanly on SIGTERM; no runner process is left behind.
    second.child.kill('SIGTERM');
    await exited(second.child);
    expect(second.child.exitCode).toBe(0);
    expect(children.filter(running)).toEqual([]);
  });
});
