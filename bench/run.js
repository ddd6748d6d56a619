// wfkit benchmark: baselines, per-step overhead, where a run's time goes, throughput, start to done through processes,
// bytes per run, runner RSS, run-list queries at 100,000 runs, database size under retention, and the PostgreSQL store (1 and 3 runners) beside SQLite. Run with `npm run bench` (builds first; imports ../dist).
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startApp } from './lib/app.js';
import { startAppProcess } from './lib/app-process.js';
import { measureHttpRoundTrip } from './lib/baseline-http.js';
import { measureSqliteCommit } from './lib/baseline-sqlite.js';
import { measureBytes } from './lib/bytes.js';
import { buildRows } from './lib/report.js';
import { measureRss } from './lib/rss.js';
import { measureCliRss } from './lib/rss-cli.js';
import { startRunner } from './lib/runner-harness.js';
import { measurePostgres } from './lib/postgres-bench.js';
import { measureRunList } from './lib/run-list.js';
import { measureSequential } from './lib/sequential.js';
import { measureStartToDone } from './lib/start-to-done.js';
import { pooled, withoutSamples } from './lib/stats.js';
import { createClient, startInProcess } from './lib/start-run.js';
import { loadWarning, systemInfo } from './lib/sysinfo.js';
import { renderTable } from './lib/table.js';
import { measureThroughput } from './lib/throughput.js';
import { measureUpstash } from './lib/upstash.js';
import { measureRetention } from './lib/retention.js';
import { measureTimeline } from './lib/timeline.js';
import { createTracer } from './lib/tracer.js';
import { noop, smallOutputs, traced } from './lib/workflows.js';

const RESULTS = fileURLToPath(new URL('./results.json', import.meta.url));
const BYTE_STEPS = [10, 50, 100, 200];
// The target row is `wf start` as users run it; the embedded rows hold 1,000 drives at once (wf start
// keeps 256 connections per origin) and report where the memory is (V8 heap vs the rest).
const RSS_VARIANTS = [
  { label: '`wf start` (the built CLI, default node flags, 256 drives at once)', cli: true, target: true },
  {
    label: '`wf start`, NODE_OPTIONS=--max-semi-space-size=4 (half its own cap)',
    cli: true,
    env: { NODE_OPTIONS: '--max-semi-space-size=4' },
  },
  { label: 'Runner embedded, 1,000 drives at once, default node flags' },
  {
    label: 'Runner embedded, 1,000 drives at once, node --max-semi-space-size=8',
    execArgv: ['--max-semi-space-size=8'],
  },
];
const token = randomBytes(24).toString('hex');
// `wf start` takes a token off loopback only if it looks random and long; the same check on loopback is harmless.
const cliToken = `wf_${randomBytes(32).toString('hex')}`;
const log = (message) => console.error(`[bench ${(performance.now() / 1000).toFixed(1)}s] ${message}`);

function routes(tracer) {
  const table = { '/traced/10': { workflow: traced(10, tracer.mark) } };
  for (const n of [10, 100]) table[`/noop/${n}`] = { workflow: noop(n) };
  for (const n of BYTE_STEPS) {
    table[`/out/${n}`] = { workflow: smallOutputs(n) };
    table[`/out-budget0/${n}`] = { workflow: smallOutputs(n), options: { timeBudgetMs: 0 } };
  }
  return table;
}

async function measureInProcess(results) {
  const tracer = createTracer();
  // Runner A is watched through runner.events (the public way); runner B through its commits,
  // with no event listener, which shows what the listener costs the runner.
  const a = await startRunner({ token, detect: 'events', api: true, label: 'events', trace: tracer.mark });
  const b = await startRunner({ token, detect: 'store', label: 'no-listener' });
  const app = await startApp({ routes: routes(tracer), token, runnerUrl: a.apiUrl, trace: tracer.mark });
  const client = createClient();
  const inProcess = (h) => (url) => startInProcess(h.runner, url);
  try {
    for (const [steps, runs] of [
      [10, 30],
      [100, 10],
    ]) {
      const url = app.urlOf(`/noop/${steps}`);
      log(`sequential, ${steps} steps`);
      const variants = [
        { label: 'runner.startRun, events listener', harness: a, start: () => inProcess(a)(url), target: true },
        { label: 'public POST to the app, events listener', harness: a, start: () => client.start(url), target: true },
        { label: 'runner.startRun, no listener', harness: b, start: () => inProcess(b)(url), target: false },
      ];
      results.sequential.push(...(await measureSequential({ steps, runs, warmup: 3, maxMs: 30_000, app, variants })));
    }

    log('timeline of one 10-step run');
    const tracedUrl = app.urlOf('/traced/10');
    results.timeline = await measureTimeline({
      tracer,
      harness: a,
      start: () => inProcess(a)(tracedUrl),
      runs: 100,
      maxMs: 10_000,
    });

    log('throughput, app in the same process');
    for (const [label, harness, target] of [
      ['app in runner process, events listener', a, true],
      ['app in runner process, no listener', b, false],
    ]) {
      const url = app.urlOf('/noop/10');
      const figures = await measureThroughput({
        runs: 100,
        steps: 10,
        batches: 3,
        maxMs: 30_000,
        harness,
        start: () => inProcess(harness)(url),
      });
      results.throughput.push({ label, target, ...figures });
    }

    log('bytes per run');
    results.bytes = await measureBytes({
      stepCounts: BYTE_STEPS,
      routeFor: (n) => app.urlOf(`/out/${n}`),
      repeat: 3,
      maxMs: 20_000,
      harness: a,
      app,
      start: inProcess(a),
    });
    log('bytes per run, timeBudgetMs: 0');
    results.bytesZeroBudget = await measureBytes({
      stepCounts: BYTE_STEPS,
      routeFor: (n) => app.urlOf(`/out-budget0/${n}`),
      repeat: 1,
      maxMs: 40_000,
      harness: a,
      app,
      start: inProcess(a),
    });
  } finally {
    await client.close();
    await app.close();
    await a.close();
    await b.close();
  }
}

async function measureWithAppProcess(results) {
  log('throughput, app in its own process');
  const harness = await startRunner({ token, detect: 'events', label: 'split' });
  const app = await startAppProcess({ token });
  try {
    const url = app.urlOf('/noop/10');
    const figures = await measureThroughput({
      runs: 100,
      steps: 10,
      batches: 3,
      maxMs: 30_000,
      harness,
      start: () => startInProcess(harness.runner, url),
    });
    results.throughput.push({ label: 'app in its own process, events listener', target: false, ...figures });
  } finally {
    await app.close();
    await harness.close();
  }
}

async function main() {
  const results = { system: systemInfo(), baselines: {}, sequential: [], throughput: [], rss: [] };
  // Baselines are taken before and after the rest; ratios use both pooled, so drift in the
  // machine's load during the run shows (start vs end) instead of silently skewing the ratios.
  log('baselines (start)');
  const httpStart = await measureHttpRoundTrip({ n: 2000 });
  const sqliteStart = await measureSqliteCommit({ n: 500 });

  await measureInProcess(results);
  await measureWithAppProcess(results);

  log('start to done: app process, wf start process, client on the event stream');
  try {
    results.startToDone = await measureStartToDone({ token });
  } catch (error) {
    results.startToDone = { error: String(error?.stack ?? error) };
  }

  log('finding runs: list queries at 100,000 runs');
  try {
    results.runList = await measureRunList({ runs: 100_000 });
  } catch (error) {
    results.runList = { error: String(error?.stack ?? error) };
  }
  try {
    results.upstash = await measureUpstash({ token, log });
  } catch (error) {
    results.upstash = { error: String(error?.stack ?? error) };
  }

  log('retention: database size under a bounded load, retention 3 s');
  try {
    results.retention = await measureRetention({ token, log });
  } catch (error) {
    results.retention = { error: String(error?.stack ?? error) };
  }

  log('baselines (end)');
  const httpEnd = await measureHttpRoundTrip({ n: 2000 });
  const sqliteEnd = await measureSqliteCommit({ n: 500 });
  results.baselines = {
    httpRoundTrip: pooled(httpStart, httpEnd),
    sqliteCommit: pooled(sqliteStart, sqliteEnd),
    httpRoundTripStart: withoutSamples(httpStart),
    httpRoundTripEnd: withoutSamples(httpEnd),
    sqliteCommitStart: withoutSamples(sqliteStart),
    sqliteCommitEnd: withoutSamples(sqliteEnd),
  };

  for (const variant of RSS_VARIANTS) {
    log(`RSS with 1000 runs in flight (child process, ${variant.label})`);
    try {
      const measure = variant.cli
        ? measureCliRss({ runs: 1000, token: cliToken, holdMs: 1_000, maxMs: 60_000, env: variant.env })
        : measureRss({ runs: 1000, token, holdMs: 1_000, maxMs: 60_000, execArgv: variant.execArgv });
      results.rss.push({ ...variant, ...(await measure) });
    } catch (error) {
      results.rss.push({ ...variant, error: String(error?.message ?? error) });
    }
  }

  log('PostgreSQL store beside SQLite');
  try {
    results.postgres = await measurePostgres({ token, log });
  } catch (error) {
    results.postgres = { error: String(error?.stack ?? error) };
  }

  results.system.loadAverage1mAtEnd = Math.round(loadavg()[0] * 100) / 100;
  results.system.warning = loadWarning(results.system);
  const rows = buildRows(results);
  results.table = rows.filter((row) => !row.section);
  writeFileSync(RESULTS, JSON.stringify(results, null, 2) + '\n');
  console.log(
    `\nwfkit bench — node ${results.system.node}, ${results.system.cpuCount} x ${results.system.cpuModel}, ${results.system.date}\n`,
  );
  console.log(renderTable(rows));
  if (results.system.warning) console.log(`\n${results.system.warning}`);
  console.log(`\nAll figures: ${RESULTS}`);
}

const started = performance.now();
await main();
log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
// Nothing should be left running; if something is, name it instead of hanging.
setTimeout(() => {
  console.error('[bench] still alive 5 s after finishing; open handles:', process.getActiveResourcesInfo());
  process.exit(1);
}, 5_000).unref();
