// Parent side of the RSS measurement: hosts the holding app, spawns bench/rss-child.js (the runner
// alone), waits until every run's step is held in the app, holds a while, releases, reads the result.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startApp } from './app.js';
import { createGate, held } from './workflows.js';
import { deadline, sleep, withTimeout } from './timebox.js';

const CHILD = fileURLToPath(new URL('../rss-child.js', import.meta.url));

/** execArgv / env: extra node flags and variables for the child (the runner), e.g. V8 heap limits. */
export async function measureRss({ runs = 1000, token, holdMs = 1_000, maxMs = 90_000, execArgv = [], env = {} }) {
  const gate = createGate();
  const app = await startApp({ routes: { '/hold': { workflow: held(gate) } }, token, backlog: 4096 });
  const time = deadline(maxMs);
  const child = spawn(process.execPath, [...execArgv, CHILD], {
    env: {
      ...process.env,
      ...env,
      WF_BENCH_URL: app.urlOf('/hold'),
      WF_BENCH_TOKEN: token,
      WF_BENCH_RUNS: String(runs),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const messages = [];
  const waiting = new Map();
  const next = (type) =>
    new Promise((resolve) => {
      const found = messages.find((m) => m.type === type);
      if (found) resolve(found);
      else waiting.set(type, resolve);
    });
  createInterface({ input: child.stdout }).on('line', (line) => {
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      return console.log(`[rss-child] ${line}`);
    }
    messages.push(message);
    waiting.get(message.type)?.(message);
  });

  try {
    const started = await withTimeout(Promise.race([next('started'), next('result')]), time.left(), 'rss child start');
    if (started.type === 'result') throw new Error(`rss child failed: ${started.error}`);
    // All drive requests in flight: every run's step is executing (held) in the app.
    while (gate.waiting < runs && !time.passed()) await sleep(20);
    const heldAtOnce = gate.waiting;
    await sleep(holdMs);
    gate.release();
    child.stdin.write('release\n');
    const result = await withTimeout(next('result'), time.left(), 'rss child result');
    if (result.error) throw new Error(`rss child failed: ${result.error}`);
    await withTimeout(exited, 5_000, 'rss child exit');
    return { ...result, heldAtOnce, appInParentProcess: true };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill();
    await exited;
    gate.release();
    await app.close();
  }
}
