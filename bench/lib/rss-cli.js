// The RSS row as users run it: the built `wf start` (dist/cli/index.js, default node flags) in a
// child process on a fresh SQLite file, runs started through its HTTP API, their steps held in an
// app in this process. Its memory is read from outside: the kernel's high-water mark (VmHWM) where
// /proc exists, else `ps` sampled every 50 ms. Heap figures need the process itself: the embedded
// row (rss.js) gives them.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { startApp } from './app.js';
import { deadline, sleep, withTimeout } from './timebox.js';
import { createGate } from './workflows.js';
import { tempDbPath } from './temp-db.js';

const CLI = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url));
const mb = (kb) => Math.round((kb / 1024) * 10) / 10;

/** Resident memory of `pid` in KiB: { rss, peak } (peak: the kernel's high-water mark, if it keeps one). */
function memoryOf(pid) {
  const status = `/proc/${pid}/status`;
  if (existsSync(status)) {
    const text = readFileSync(status, 'utf8');
    const field = (name) => Number(text.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'))?.[1] ?? 0);
    return { rss: field('VmRSS'), peak: field('VmHWM') };
  }
  const rss = Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' }).trim());
  return { rss, peak: 0 };
}

/**
 * cli: the built CLI to run (another tree's, for an A/B); execArgv: node flags before it; args:
 * `wf start` flags after it (none: its defaults, 256 drives at once); env: e.g. NODE_OPTIONS. The
 * hold lasts until `heldAtOnce` steps wait in the app (as many as it drives at once), then `holdMs`.
 */
export async function measureCliRss({
  runs = 1000,
  token,
  cli = CLI,
  execArgv = [],
  args = [],
  heldAtOnce: expected = 256,
  holdMs = 1_000,
  maxMs = 90_000,
  env = {},
}) {
  const gate = createGate();
  let finished = 0;
  const workflow = async (context) => {
    await context.run('hold', () => gate.wait());
    await context.run('after', () => {
      finished++;
      return 1;
    });
  };
  const app = await startApp({ routes: { '/hold': { workflow } }, token, backlog: 4096 });
  const db = tempDbPath('rss-cli');
  const time = deadline(maxMs);
  const child = spawn(
    process.execPath,
    [...execArgv, cli, 'start', '--port', '0', '--database', db.path, '--log-format', 'json', ...args],
    {
      env: {
        ...process.env,
        WF_TOKENS: token,
        WF_TOKEN: '',
        WF_DATABASE_URL: '',
        WF_ALLOWED_ORIGINS: app.origin,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const listening = new Promise((resolve) =>
    createInterface({ input: child.stdout }).on('line', (line) => {
      try {
        const entry = JSON.parse(line);
        if (typeof entry.url === 'string' && /listening/.test(entry.msg ?? entry.message ?? line)) resolve(entry.url);
      } catch {
        console.log(`[wf start] ${line}`);
      }
    }),
  );
  const agent = new Agent({ connections: 8, keepAliveTimeout: 10_000 });
  let peak = 0;
  let sampler;
  try {
    const url = await withTimeout(
      Promise.race([listening, exited.then((e) => Promise.reject(new Error(`wf start exited: ${JSON.stringify(e)}`)))]),
      time.left(),
      'wf start listening',
    );
    await sleep(200);
    const baseline = memoryOf(child.pid);
    peak = baseline.rss;
    sampler = setInterval(() => (peak = Math.max(peak, memoryOf(child.pid).rss)), 50);
    const call = async (method, path, body) => {
      const res = await agent.request({
        origin: url,
        path,
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body && JSON.stringify(body),
      });
      const text = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
      return JSON.parse(text);
    };
    const t0 = performance.now();
    const starts = [];
    for (let i = 0; i < runs; i++) starts.push(call('POST', '/v1/runs', { url: app.urlOf('/hold'), body: '{}' }));
    await Promise.all(starts);
    const startMs = performance.now() - t0;
    while (gate.waiting < expected && !time.passed()) await sleep(20);
    const heldAtOnce = gate.waiting;
    if (heldAtOnce < expected)
      throw new Error(`only ${heldAtOnce} of ${expected} steps held at once within ${maxMs} ms`);
    await sleep(holdMs);
    const atRelease = memoryOf(child.pid);
    const peakWhileHeld = Math.max(peak, atRelease.peak);
    gate.release();
    const t1 = performance.now();
    while (finished < runs && !time.passed()) await sleep(20);
    // The runs' last drives answer after their last step: wait until none is running.
    while (!time.passed()) {
      const page = await call('GET', '/v1/runs?status=running&limit=1');
      if ((page.runs ?? page.items ?? []).length === 0) break;
      await sleep(20);
    }
    if (time.passed()) throw new Error(`runs did not finish within ${maxMs} ms (${finished} of ${runs})`);
    const drainMs = performance.now() - t1;
    const end = memoryOf(child.pid);
    peak = Math.max(peak, end.peak);
    return {
      runs,
      heldAtOnce,
      baselineRssMB: mb(baseline.rss),
      peakRssMB: mb(peak),
      peakRssWhileHeldMB: mb(peakWhileHeld),
      rssAtReleaseMB: mb(atRelease.rss),
      perRunKB: Math.round(((peak - baseline.rss) / runs) * 10) / 10,
      peakFrom: end.peak ? 'VmHWM' : 'ps every 50 ms',
      startAllMs: Math.round(startMs),
      drainAfterReleaseMs: Math.round(drainMs),
    };
  } finally {
    clearInterval(sampler);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await withTimeout(exited, 15_000, 'wf start exit').catch(() => child.kill('SIGKILL'));
    gate.release();
    await agent.close();
    await app.close();
    db.remove();
  }
}
