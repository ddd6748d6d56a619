// Where a 0-step run's time goes between its three processes: the start-to-done row's client, app
// and `wf start`, each with bench/lib/hop-trace.js preloaded, then every run's socket writes and
// reads and SQLite commits folded into one path (bench/lib/hop-report.js). Diagnostics, not a row
// of the bench: the tracing itself costs a little in every process. `npm run build` first, then
// `node bench/hops.js [runs]` (default 300).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { foldHops } from './lib/hop-report.js';
import { quantile } from './lib/stats.js';
import { startStartToDone } from './lib/start-to-done.js';

const runs = Number(process.argv[2] ?? 300);
const WARMUP = 20;
const dir = mkdtempSync(join(tmpdir(), 'wf-hops-'));
const preload = fileURLToPath(new URL('./lib/hop-trace.js', import.meta.url));
// Set before the children start (they inherit the environment) and before this process opens a socket.
process.env.WF_HOPS_DIR = dir;
process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import ${preload}`.trim();
const { takeNotes } = await import('./lib/hop-trace.js');

try {
  const stack = await startStartToDone({ token: randomBytes(24).toString('hex'), steps: [0] });
  const spans = [];
  try {
    for (let i = 0; i < WARMUP + runs; i++) {
      const { startedAt, doneAt } = await stack.once(0);
      if (i >= WARMUP) spans.push([performance.timeOrigin + startedAt, performance.timeOrigin + doneAt]);
    }
  } finally {
    await stack.close();
  }
  const processes = [takeNotes(), ...readdirSync(dir).map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')))];
  const rows = foldHops(processes, spans);
  const total = spans.map(([a, b]) => b - a);
  const ms = (q) => quantile(total, q).toFixed(2);
  console.log(
    `${spans.length} runs of 0 steps, start to done (traced): min ${ms(0)}, median ${ms(0.5)}, p90 ${ms(0.9)} ms`,
  );
  const table = [
    ['milestone', 'after', 'at (median ms)', 'hop p10', 'hop median', 'hop p90', 'in write()', 'runs'],
    ...rows.map((r) => [
      r.milestone,
      r.after,
      r.atMs,
      r.hopMs.p10,
      r.hopMs.median,
      r.hopMs.p90,
      r.writeMs ?? '',
      r.seenIn,
    ]),
  ].map((row) => row.map(String));
  const widths = table[0].map((_, i) => Math.max(...table.map((row) => row[i].length)));
  for (const row of table)
    console.log(
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
