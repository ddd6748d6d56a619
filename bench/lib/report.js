// Turns the measured figures into table rows: value, target, pass/fail, ratios to the baselines.
import { round } from './stats.js';

const ms = (v) => `${round(v, 3)} ms`;
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');

export function buildRows(r) {
  const rtt = r.baselines.httpRoundTrip.median;
  const commit = r.baselines.sqliteCommit.median;
  const ratios = (timeMs) => ({ vsHttp: `${round(timeMs / rtt, 1)}x`, vsSqlite: `${round(timeMs / commit, 1)}x` });
  const rows = [];

  rows.push({ section: 'baselines' });
  const b = r.baselines;
  rows.push({
    metric: `HTTP round trip (undici keep-alive, loopback), median of ${b.httpRoundTrip.n}`,
    value: ms(rtt),
    vsHttp: '1x',
    vsSqlite: `${round(rtt / commit, 2)}x`,
  });
  rows.push({
    metric: `  p99 (median at start ${ms(b.httpRoundTripStart.median)}, at end ${ms(b.httpRoundTripEnd.median)})`,
    value: ms(b.httpRoundTrip.p99),
  });
  rows.push({
    metric: `SQLite commit (WAL, synchronous=FULL, 1 INSERT/tx), median of ${b.sqliteCommit.n}`,
    value: ms(commit),
    vsHttp: `${round(commit / rtt, 1)}x`,
    vsSqlite: '1x',
  });
  rows.push({
    metric: `  p99 (median at start ${ms(b.sqliteCommitStart.median)}, at end ${ms(b.sqliteCommitEnd.median)})`,
    value: ms(b.sqliteCommit.p99),
  });

  rows.push({ section: 'sequential per-step overhead = median run time / steps (target <= 0.5 ms)' });
  for (const s of r.sequential) {
    rows.push({
      metric: `${s.steps} steps, ${s.label} (${s.runs} runs; run p99 ${round(s.runMs.p99, 2)} ms)`,
      value: ms(s.perStepMs),
      target: s.target ? '<= 0.5 ms' : 'info',
      status: s.target ? verdict(s.perStepMs <= 0.5) : '',
      ...ratios(s.perStepMs),
    });
    rows.push({
      metric: `  whole run (median); start call ${round(s.startCallMs, 2)} ms, store work ${round(s.storeMsPerRun, 2)} ms, ${s.writeTxPerRun} write tx, ${s.driveRequestsPerRun} drive req`,
      value: ms(s.runMs.median),
      ...ratios(s.runMs.median),
    });
  }
  for (const label of new Set(r.sequential.map((s) => s.label))) {
    const s10 = r.sequential.find((s) => s.label === label && s.steps === 10);
    const s100 = r.sequential.find((s) => s.label === label && s.steps === 100);
    if (!s10 || !s100) continue;
    const marginal = (s100.runMs.median - s10.runMs.median) / 90;
    rows.push({
      metric: `marginal cost of one more step = (run(100) - run(10)) / 90, ${label}`,
      value: ms(marginal),
      target: 'info',
      ...ratios(marginal),
    });
  }

  if (r.timeline) {
    rows.push({
      section: `where one 10-step run's time goes (${r.timeline.runs} sequential runs, events listener; median per phase)`,
    });
    for (const p of r.timeline.phases)
      rows.push(
        p.medianMs === null
          ? { metric: `  ${p.phase}`, value: `in none of ${r.timeline.runs} runs` }
          : { metric: `  ${p.phase} (in ${p.seenIn} runs)`, value: ms(p.medianMs), ...ratios(p.medianMs) },
      );
    rows.push({
      metric: 'traced run, start -> completion seen (median)',
      value: ms(r.timeline.medianRunMs),
      ...ratios(r.timeline.medianRunMs),
    });
  }

  rows.push({ section: 'throughput (100 concurrent runs x 10 steps; median of warm batches; target >= 3000 steps/s)' });
  for (const t of r.throughput) {
    rows.push({
      metric: `${t.label} (batch ${round(t.elapsedMs, 0)} ms: CPU ${round(t.cpuMs, 0)} ms, store ${round(t.storeMs, 0)} ms in ${t.writeTx} write tx; starts ${round(t.startPhaseMs, 0)} ms)`,
      value: `${t.stepsPerSec} steps/s`,
      target: t.target ? '>= 3000 steps/s' : 'info',
      status: t.target ? verdict(t.stepsPerSec >= 3000 && t.failed === 0) : '',
      ...ratios(1000 / t.stepsPerSec),
    });
    rows.push({
      metric: '  first (cold) batch: new connections, unoptimized code',
      value: `${t.coldStepsPerSec} steps/s`,
      target: 'info',
    });
  }

  rows.push({ section: 'bytes per run, runner <-> app bodies (default time budget: one drive request per run)' });
  for (const b of r.bytes.rows) {
    rows.push({
      metric: `${b.steps} steps: ${b.runnerToAppBodyBytes} B sent + ${b.appToRunnerBodyBytes} B back, ${b.driveRequests} request(s), on the wire ${b.wireBytes} B`,
      value: `${b.bodyBytesPerStep} B/step`,
    });
  }
  const lin = r.bytes.ratio200over100.total;
  rows.push({
    metric: 'bytes(200 steps) / bytes(100 steps)',
    value: `${lin}`,
    target: '~2 (linear)',
    status: verdict(lin !== null && lin >= 1.8 && lin <= 2.2),
  });

  rows.push({
    section:
      'bytes per run, timeBudgetMs: 0 (one drive request per step; committed steps re-sent each time: QUADRATIC, expected)',
  });
  for (const b of r.bytesZeroBudget.rows) {
    rows.push({
      metric: `${b.steps} steps: ${b.runnerToAppBodyBytes} B sent + ${b.appToRunnerBodyBytes} B back, ${b.driveRequests} requests, run ${round(b.runMs, 0)} ms`,
      value: `${b.bodyBytesPerStep} B/step`,
    });
  }
  const quad = r.bytesZeroBudget.ratio200over100;
  rows.push({
    metric: 'bytes(200)/bytes(100), runner -> app (quadratic => ~4)',
    value: `${quad.runnerToApp}`,
    target: 'info: ~4 expected',
    status: quad.runnerToApp === null ? '' : quad.runnerToApp > 3 ? 'quadratic' : 'sub-quadratic',
  });
  rows.push({ metric: 'bytes(200)/bytes(100), app -> runner', value: `${quad.appToRunner}`, target: 'info: ~2' });

  rows.push(...rssRows(r, commit));
  rows.push(...startToDoneRows(r, ratios));
  rows.push(...runListRows(r, ratios));
  rows.push(...upstashRows(r, ratios));
  rows.push(...retentionRows(r));
  rows.push(...postgresRows(r, ratios));
  return rows;
}

/** Start to done through processes as deployed: app, `wf start`, and a client on the event stream. */
/** The RSS rows: the target (`wf start`, memory read from outside) and the embedded runner's heap split. */
export function rssRows(r, commit) {
  const out = [];
  out.push({
    section: 'runner peak RSS, 1000 runs in flight (child process = the runner only; the app is in the parent)',
  });
  for (const m of r.rss) {
    if (m.error) {
      out.push({ metric: `${m.label}: ${m.error}`, value: 'error', status: m.target ? 'FAIL' : '' });
      continue;
    }
    out.push({
      metric: `${m.label}: peak (baseline ${m.baselineRssMB} MB; ${m.heldAtOnce} steps held at once; ${m.perRunKB} KB/run)`,
      value: `${m.peakRssMB} MB`,
      target: m.target ? '<= 120 MB' : 'info',
      status: m.target ? verdict(m.peakRssMB <= 120) : '',
    });
    if (m.cli) {
      out.push({ metric: `  while held (${m.peakFrom})`, value: `${m.peakRssWhileHeldMB} MB`, target: 'info' });
      out.push({ metric: `  starting ${m.runs} runs through POST /v1/runs (8 connections)`, value: ms(m.startAllMs) });
      continue;
    }
    const a = m.atRelease;
    out.push({
      metric: `  while held: rss ${a.rssMB}, V8 heap total ${a.heapTotalMB} / used ${a.heapUsedMB}, external ${a.externalMB} MB; after release peak ${m.peakRssMB}`,
      value: `${m.peakRssWhileHeldMB} MB`,
      target: 'info',
    });
    out.push({
      metric: `  starting ${m.runs} runs one after another (runner.startRun)`,
      value: ms(m.startAllMs),
      vsSqlite: `${round(m.startAllMs / m.runs / commit, 1)}x per start`,
    });
  }
  return out;
}

function startToDoneRows(r, ratios) {
  const rows = [
    {
      section:
        'start to done as a user sees it: client POST to a wfkit/node app (own process) -> wf start on SQLite (own process) -> completion on GET /v1/events',
    },
  ];
  const t = r.startToDone;
  if (!t) return rows.concat({ metric: 'not measured', value: 'skipped' });
  if (t.error) return rows.concat({ metric: `failed: ${t.error.split('\n')[0]}`, value: 'error' });
  for (const row of t) {
    rows.push({
      metric: `${row.steps}-step run, median of ${row.runs} (p99 ${ms(row.p99Ms)}, min ${ms(row.minMs)})`,
      value: ms(row.medianMs),
      target: row.steps === 0 ? '<= 3 ms' : 'info',
      ...(row.steps === 0 && { status: row.medianMs <= 3 ? 'PASS' : 'FAIL' }),
      ...ratios(row.medianMs),
    });
  }
  return rows;
}

/** Retention: the database's size stays flat under a long load once runs start to be pruned. */
function retentionRows(r) {
  const t = r.retention;
  const rows = [
    { section: 'retention: SQLite database size (pages + WAL) under a bounded load, runs pruned in the background' },
  ];
  if (!t) return rows.concat({ metric: 'not measured', value: 'skipped' });
  if (t.error) return rows.concat({ metric: `failed: ${t.error.split('\n')[0]}`, value: 'error' });
  const mb = (bytes) => `${round(bytes / 1e6, 2)} MB`;
  rows.push({
    metric: `size at the end / at ${round(t.reference.atMs / 1000, 0)} s, while runs done grew ${t.runsGrowth}x (${t.reference.runs} -> ${t.end.runs}; ${t.steps} steps, ${t.concurrency} in flight, retention ${t.retentionMs / 1000} s, ${round(t.elapsedMs / 1000, 0)} s; ${mb(t.reference.bytes)} -> ${mb(t.end.bytes)}, peak ${mb(t.peakBytes)}; runs in the store ${t.reference.runsInStore} -> ${t.end.runsInStore})`,
    value: `${t.growth}x`,
    target: '~1x (flat)',
    status: t.growth <= 1.5 && t.failed === 0 ? 'PASS' : 'FAIL',
  });
  rows.push({
    metric: `  samples (s: MB): ${t.samples.map((s) => `${round(s.atMs / 1000, 0)}: ${round(s.bytes / 1e6, 1)}`).join(', ')}`,
    value: '',
    target: 'info',
  });
  return rows;
}

/** Finding runs: each list query at 100,000 runs against a primary-key lookup in the same run. */
function runListRows(r, ratios) {
  return listRows(r.runList, 'SQLite', ratios);
}

function listRows(list, store, ratios) {
  if (!list) return [];
  if (list.error)
    return [{ section: `finding runs (${store})` }, { metric: `failed: ${list.error.split('\n')[0]}`, value: 'error' }];
  const rows = [
    {
      section: `finding runs: store.listRuns, first page of 50, at ${list.runs.toLocaleString('en')} runs (${store}; seeded in ${round(list.seedMs / 1000, 1)} s)`,
    },
  ];
  rows.push({
    metric: `baseline: one run by primary key (store.getRun), median of ${list.lookup.n}`,
    value: ms(list.lookup.median),
    target: 'info',
    ...ratios(list.lookup.median),
  });
  for (const q of list.rows) {
    rows.push({
      metric: `  ${q.label} (${q.found} found; p99 ${ms(q.p99)}; ${round(q.vsLookup, 1)}x a PK lookup)`,
      value: ms(q.median),
      target: 'info',
      ...ratios(q.median),
    });
  }
  return rows;
}

/** The Upstash-protocol run beside the native one (same runner, interleaved): per step, and as a multiple of native. */
function upstashRows(r, ratios) {
  const u = r.upstash;
  const rows = [
    {
      section:
        'Upstash protocol (QStash API, real @upstash/workflow on Hono) beside the native run, sequential, SQLite',
    },
  ];
  if (!u) return rows.concat({ metric: 'not measured', value: 'skipped' });
  if (u.error) return rows.concat({ metric: `failed: ${u.error.split('\n')[0]}`, value: 'error' });
  for (const row of u.rows) {
    rows.push({
      metric: `${u.steps} steps, ${row.label} (${u.runs} runs; run median ${round(row.runMs.median, 2)} ms, p99 ${round(row.runMs.p99, 2)} ms)`,
      value: ms(row.perStepMs),
      target: 'info',
      ...ratios(row.perStepMs),
    });
  }
  rows.push({
    metric: `Upstash-protocol run / native run (median ${u.steps}-step run time)`,
    value: `${u.upstashOverNative}x`,
    target: 'info',
  });
  // The floor: the same SDK app against an in-memory QStash stand-in (bench/lib/qstash-standin.js).
  if (u.floorOverNative !== undefined) {
    rows.push({
      metric: `Upstash SDK against an in-memory QStash stand-in (no storage) / native run (median ${u.steps}-step run time)`,
      value: `${u.floorOverNative}x`,
      target: 'info',
    });
    rows.push({
      metric: `  the runner's share of an Upstash run (wfkit run - stand-in run, medians; ${round(u.runnerShareMs / u.steps, 3)} ms per step)`,
      value: ms(u.runnerShareMs),
      target: 'info',
    });
  }
  // Where an Upstash step's time goes (median per run / steps; app and runner share one thread).
  for (const p of u.phases ?? [])
    rows.push({ metric: `  per step, ${p.phase}`, value: ms(p.perStepMs), target: 'info' });
  return rows;
}

/** The PostgreSQL section: the same measurements on both stores, side by side. */
function postgresRows(r, ratios) {
  const pg = r.postgres;
  const rows = [
    {
      section:
        'PostgreSQL store beside SQLite (same machine; the server on 127.0.0.1, fsync and synchronous_commit on)',
    },
  ];
  if (!pg) return rows.concat({ metric: 'not measured', value: 'skipped' });
  if (pg.skipped) return rows.concat({ metric: pg.skipped, value: 'skipped' });
  if (pg.error) return rows.concat({ metric: `failed: ${pg.error.split('\n')[0]}`, value: 'error' });
  if (pg.commit) {
    rows.push({
      metric: `PostgreSQL ${pg.server} commit (1 INSERT/tx over loopback TCP), median of ${pg.commit.n}; p99 ${ms(pg.commit.p99)}`,
      value: ms(pg.commit.median),
      ...ratios(pg.commit.median),
    });
  }
  for (const s of pg.sequential) {
    rows.push({
      metric: `sequential per-step overhead, ${s.steps} steps, ${s.label} (${s.runs} runs; run median ${round(s.runMs.median, 2)} ms, p99 ${round(s.runMs.p99, 2)} ms; ${s.writeTxPerRun} write tx, store ${round(s.storeMsPerRun, 2)} ms per run)`,
      value: ms(s.perStepMs),
      target: 'info',
      ...ratios(s.perStepMs),
    });
  }
  for (const t of pg.throughput) {
    rows.push({
      metric: `throughput, 100 concurrent runs x 10 steps, ${t.label} (batch ${round(t.elapsedMs, 0)} ms, ${t.writeTx} write tx; cold ${t.coldStepsPerSec} steps/s${t.failed ? `; ${t.failed} failed` : ''})`,
      value: `${t.stepsPerSec} steps/s`,
      target: 'info',
    });
  }
  for (const p of pg.processes) {
    if (p.error) {
      rows.push({ metric: `throughput, ${p.label}: ${p.error}`, value: 'error' });
      continue;
    }
    // The goal for one wf start on SQLite (issue: 15,000 steps/s); PostgreSQL's rows show the curve over runners.
    const sqliteOne = p.label === 'SQLite, 1 wf start process';
    rows.push({
      metric: `throughput, ${p.runs} concurrent runs x ${p.stepsPerRun} steps through the runners' APIs, ${p.label}, app in the bench process (median of ${p.batches} batches ${round(p.elapsedMs, 0)} ms; cold ${p.coldStepsPerSec}, warm-up ${(p.warmupStepsPerSec ?? []).join(', ')} steps/s${p.failed || p.incomplete ? `; ${p.failed} failed, ${p.incomplete} unfinished` : ''})`,
      value: `${p.stepsPerSec} steps/s`,
      target: sqliteOne ? '>= 15000 steps/s' : 'info',
      ...(sqliteOne && { status: verdict(p.stepsPerSec >= 15_000 && !p.failed && !p.incomplete) }),
    });
  }
  const pgOne = pg.processes.find((p) => p.label === 'PostgreSQL, 1 wf start process');
  for (const p of pg.processes.filter((p) => /PostgreSQL, [23] wf start/.test(p.label) && !p.error)) {
    if (!pgOne || pgOne.error) break;
    rows.push({
      metric: `  ${p.label} / 1 wf start process (more runners should do more work, not less)`,
      value: `${round(p.stepsPerSec / pgOne.stepsPerSec, 2)}x`,
      target: '>= 1x',
      status: verdict(p.stepsPerSec >= pgOne.stepsPerSec),
    });
  }
  rows.push(...listRows(pg.runList, 'PostgreSQL', ratios));
  return rows;
}
