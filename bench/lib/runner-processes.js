// `wf start` runner processes (the built CLI) on one database, and throughput through their APIs:
// the way a cluster of runners is really run, each process on its own event loop.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { round } from './stats.js';
import { deadline, sleep, withTimeout } from './timebox.js';

const CLI = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url));

async function startOne({ database, token, cwd }) {
  const child = spawn(process.execPath, [CLI, 'start', '--port', '0', '--database', database, '--grace-ms', '500'], {
    cwd,
    // wf start calls only allowed origins: the bench's apps listen on loopback.
    env: {
      ...process.env,
      WF_TOKENS: token,
      WF_TOKEN: '',
      WF_DATABASE_URL: '',
      WF_ALLOWED_ORIGINS: 'http://127.0.0.1:*',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const url = await withTimeout(
    new Promise((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        const match = /listening on (http:\/\/\S+)/.exec(out);
        if (match) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`wf start exited ${code} before listening: ${out}`)));
    }),
    20_000,
    'wf start',
  ).catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });
  child.stdout.resume();
  return { url, child };
}

/** Starts `count` runner processes on `database`; close() sends SIGTERM and waits for each. */
export async function startRunnerProcesses({ count, database, token, cwd }) {
  const runners = [];
  try {
    for (let i = 0; i < count; i++) runners.push(await startOne({ database, token, cwd }));
  } catch (error) {
    for (const r of runners) r.child.kill('SIGKILL');
    throw error;
  }
  return {
    urls: runners.map((r) => r.url),
    async close() {
      await Promise.all(
        runners.map(async ({ child }) => {
          if (child.exitCode !== null) return;
          const exited = once(child, 'exit');
          child.kill('SIGTERM');
          await withTimeout(exited, 10_000, 'wf start exit').catch(() => child.kill('SIGKILL'));
        }),
      );
    },
  };
}

/**
 * Throughput of runner processes: `runs` runs started at once through their APIs (round-robin),
 * completion read from the database (`countFinished()` → { completed, failed }, polled every 10 ms).
 * The first batch is reported as cold, the next `warmup` per runner process as warm-up (a fresh
 * process runs its first thousand or so runs on code V8 has not fully optimized yet: the figures
 * still climb batch by batch there); the figure is the median of the `batches` after them, a
 * long-running runner's steady state. The warm-up counts per process because V8 optimizes each
 * process on the runs it drove: with a fixed number of batches, each of three runners would have
 * driven a third of the warm-up runs and be measured still warming up.
 */
export async function measureProcessThroughput({
  urls,
  token,
  appUrl,
  countFinished,
  runs = 100,
  steps = 10,
  warmup = 5,
  batches = 3,
  maxMs = 60_000,
}) {
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });
  const time = deadline(maxMs);
  let turn = 0;
  const start = async () => {
    const origin = urls[turn++ % urls.length];
    const res = await agent.request({
      origin,
      path: '/v1/runs',
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: appUrl, body: '{}', headers: {} }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 201) throw new Error(`POST /v1/runs answered ${res.statusCode}: ${text}`);
  };
  const batch = async () => {
    const before = await countFinished();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: runs }, start));
    let done = before;
    for (;;) {
      done = await countFinished();
      if (done.completed + done.failed >= before.completed + before.failed + runs || time.passed()) break;
      await sleep(10);
    }
    const elapsedMs = performance.now() - t0;
    const completed = done.completed - before.completed;
    return {
      completed,
      failed: done.failed - before.failed,
      elapsedMs,
      stepsPerSec: (completed * steps) / (elapsedMs / 1000),
    };
  };
  try {
    const cold = await batch();
    const warmingUp = [];
    for (let i = 0; i < warmup * urls.length && !time.passed(); i++) warmingUp.push(await batch());
    const warm = [];
    for (let i = 0; i < batches && !time.passed(); i++) warm.push(await batch());
    const mid =
      warm.length > 0
        ? warm.toSorted((a, b) => a.stepsPerSec - b.stepsPerSec)[Math.floor((warm.length - 1) / 2)]
        : cold;
    return {
      runs,
      stepsPerRun: steps,
      batches: warm.length,
      runners: urls.length,
      stepsPerSec: round(mid.stepsPerSec, 0),
      coldStepsPerSec: round(cold.stepsPerSec, 0),
      elapsedMs: round(mid.elapsedMs, 1),
      warmupStepsPerSec: warmingUp.map((b) => round(b.stepsPerSec, 0)),
      failed: [cold, ...warmingUp, ...warm].reduce((sum, b) => sum + b.failed, 0),
      incomplete: [cold, ...warmingUp, ...warm].reduce((sum, b) => sum + (runs - b.completed - b.failed), 0),
      allStepsPerSec: [cold, ...warmingUp, ...warm].map((b) => round(b.stepsPerSec, 0)),
    };
  } finally {
    await agent.close();
  }
}
