// Where one run's time goes: sequential runs traced mark by mark, folded into named phases.
// Each phase is (to - from) per run; the table shows its median over the traced runs.
import { median, round } from './stats.js';
import { deadline } from './timebox.js';

// Tags of the store's commits (store-probe.js `applyTag`).
const STEPS = 'apply(steps)';
// The drive's end: its attempt, "completed" and the lease's release, with the steps that came with
// the terminal line (drive/attempt.ts `holdLast`), in one transaction.
const DONE = 'apply(end)';

/**
 * [label, from mark (null = the start call), to mark]. A run started through the runner is inserted
 * already running and leased to it (no separate claim or status commit), and driven at once. A
 * phase no traced run went through (steps committed before the end, when the answer came in
 * pieces) is reported with `seenIn: 0` and no time.
 */
export const PHASES = [
  ['start: createRuns transaction (starts group-committed), inserted running and leased', null, 'createRuns end'],
  ['created -> drive request arrives at the app (sign, send)', 'createRuns end', 'app: request arrives'],
  ['app: read the request body', 'app: request arrives', 'app: request body read'],
  ['app: verify signature, parse, start the workflow', 'app: request body read', 'app: workflow starts'],
  ['app: run 10 no-op steps, stream 20 lines', 'app: workflow starts', 'app: workflow returned'],
  ['app: terminal line, end the response', 'app: workflow returned', 'app: response finished'],
  ['runner: read the answer, settle, wait for the commit turn', 'app: response finished', `${DONE} begin`],
  [
    'runner: commit the steps, attempt, "completed" and lease release (one transaction)',
    `${DONE} begin`,
    `${DONE} end`,
  ],
  ['event reaches the bench', `${DONE} end`, 'run finished (seen by the bench)'],
  ['runner: steps read before the end, committed on their own (answer in pieces)', `${STEPS} begin`, `${STEPS} end`],
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
    return { phase: label, medianMs: values.length > 0 ? round(median(values), 3) : null, seenIn: values.length };
  });
  return {
    runs: traces.length,
    medianRunMs: round(median(traces.map((m) => m.get(END) ?? NaN).filter(Number.isFinite)), 3),
    phases,
  };
}
