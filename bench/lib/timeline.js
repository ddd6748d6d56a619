// Where one run's time goes: sequential runs traced mark by mark, folded into named phases.
// Each phase is (to - from) per run; the table shows its median over the traced runs.
import { median, round } from './stats.js';
import { deadline } from './timebox.js';

const STEPS = 'apply(step-started,step-succeeded)';
// The drive's last commit gives the lease back in the same transaction.
const DONE = 'apply(attempt,run:completed,release)';

/**
 * [label, from mark (null = the start call), to mark]. A run started through the runner is inserted
 * already running and leased to it (no separate claim or status commit), and driven at once.
 */
export const PHASES = [
  ['start: createRun transaction, inserted running and leased (commit)', null, 'createRun end'],
  ['created -> drive request arrives at the app (sign, send)', 'createRun end', 'app: request arrives'],
  ['app: read the request body', 'app: request arrives', 'app: request body read'],
  ['app: verify signature, parse, start the workflow', 'app: request body read', 'app: workflow starts'],
  ['app: run 10 no-op steps, stream 20 lines', 'app: workflow starts', 'app: workflow returned'],
  ['app: terminal line, end the response', 'app: workflow returned', 'app: response finished'],
  ['runner: read lines, wait for the commit turn', 'app: response finished', `${STEPS} begin`],
  ['runner: commit the steps (first batch, one transaction)', `${STEPS} begin`, `${STEPS} end`],
  ['runner: events listener reads + settle', `${STEPS} end`, `${DONE} begin`],
  ['runner: commit attempt + "completed" + lease release', `${DONE} begin`, `${DONE} end`],
  ['event reaches the bench', `${DONE} end`, 'run finished (seen by the bench)'],
  ['after the run: scheduler poll (claimDue)', 'claimDue begin', 'claimDue end'],
];
const END = 'run finished (seen by the bench)';

export async function measureTimeline({ tracer, harness, start, runs = 100, warmup = 5, maxMs = 10_000 }) {
  const time = deadline(maxMs);
  for (let i = 0; i < warmup && !time.passed(); i++) await harness.waitFor(await start());
  const traces = [];
  for (let i = 0; i < runs && !time.passed(); i++) {
    tracer.begin();
    await harness.waitFor(await start());
    traces.push(new Map(tracer.end()));
  }
  const phases = PHASES.map(([label, from, to]) => {
    const values = traces
      .filter((m) => m.has(to) && (from === null || m.has(from)))
      .map((m) => m.get(to) - (from === null ? 0 : m.get(from)));
    return { phase: label, medianMs: round(median(values), 3), seenIn: values.length };
  });
  return {
    runs: traces.length,
    medianRunMs: round(median(traces.map((m) => m.get(END) ?? NaN).filter(Number.isFinite)), 3),
    phases,
  };
}
