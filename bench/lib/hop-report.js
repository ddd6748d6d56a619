// Folds the notes of bench/lib/hop-trace.js (the client, the app and `wf start`) into one 0-step
// run's path: for each run, when each milestone came (ms since the client sent the start), and how
// long each hop took (the milestone before it on the same path). Medians over the traced runs.
import { quantile, round } from './stats.js';

const roleOf = (argv) => {
  const args = argv.join(' ');
  if (args.includes('cli/index.js')) return 'runner';
  if (args.includes('app-child.js')) return 'app';
  return 'client';
};

const startsWith = (prefix) => (text) => text.startsWith(prefix);
const has = (part) => (text) => text.includes(part);

/**
 * [label, role, kind, match, after, edge]: the first note of `role` and `kind` matching `match`
 * at or after the milestone `after` (null: the run's start). `edge: 'done'` takes the note's end
 * (a COMMIT's end is when the run is durable). The drive path is the one a run's end waits for;
 * the start's answer to the client goes on beside it.
 */
const MILESTONES = [
  ['client sends the start', 'client', 'write', startsWith('POST /noop/'), null],
  [
    'app reads the start',
    'app',
    'request',
    (t) => t.startsWith('POST /noop/') && !t.endsWith(' signed'),
    'client sends the start',
  ],
  ['app calls POST /v1/runs', 'app', 'write', startsWith('POST /v1/runs'), 'app reads the start'],
  ['runner reads the call', 'runner', 'request', startsWith('POST /v1/runs'), 'app calls POST /v1/runs'],
  ['createRuns transaction begins', 'runner', 'sql', startsWith('BEGIN'), 'runner reads the call'],
  ['createRuns COMMIT begins', 'runner', 'sql', startsWith('COMMIT'), 'createRuns transaction begins'],
  ['the start is durable', 'runner', 'sql', startsWith('COMMIT'), 'createRuns transaction begins', 'done'],
  ['runner sends the 201', 'runner', 'write', startsWith('HTTP/1.1 201'), 'the start is durable'],
  ['runner sends the drive', 'runner', 'write', startsWith('POST /noop/'), 'the start is durable'],
  [
    'app reads the drive',
    'app',
    'request',
    (t) => t.startsWith('POST /noop/') && t.endsWith(' signed'),
    'runner sends the drive',
  ],
  [
    'app answers the drive',
    'app',
    'write',
    (t) => t.startsWith('HTTP/1.1 200') && !t.includes('workflowRunId'),
    'app reads the drive',
  ],
  ['runner reads the answer', 'runner', 'read', startsWith('HTTP/1.1 200'), 'app answers the drive'],
  ['end transaction begins', 'runner', 'sql', startsWith('BEGIN'), 'runner reads the answer'],
  ['end COMMIT begins', 'runner', 'sql', startsWith('COMMIT'), 'end transaction begins'],
  ['the end is durable', 'runner', 'sql', startsWith('COMMIT'), 'end transaction begins', 'done'],
  ['runner sends "completed"', 'runner', 'write', has('"completed"'), 'the end is durable'],
  ['client reads "completed"', 'client', 'read', has('"completed"'), 'runner sends "completed"'],
  ['app reads the 201', 'app', 'read', startsWith('HTTP/1.1 201'), 'runner sends the 201'],
  ['app answers the client', 'app', 'write', has('workflowRunId'), 'app reads the 201'],
  ['client reads its answer', 'client', 'read', has('workflowRunId'), 'app answers the client'],
];

/**
 * processes: `[{ argv, notes }]` (hop-trace.js); runs: `[[startedAt, doneAt]]` in absolute ms.
 * Returns one row per milestone: `{ milestone, after, atMs, hopMs: { p10, median, p90 }, writeMs, seenIn }`,
 * `writeMs` the median time inside the write call (the kernel's loopback send, waking the reader).
 */
export function foldHops(processes, runs) {
  const notes = processes
    .flatMap(({ argv, notes }) =>
      notes.map(([at, doneAt, kind, text]) => ({ at, doneAt, kind, text, role: roleOf(argv) })),
    )
    .sort((a, b) => a.at - b.at);
  const perRun = runs.map(([startedAt, doneAt]) => {
    // Notes from a little before the start (the clocks of two processes) to a little after the end.
    const mine = notes.filter((n) => n.at >= startedAt - 0.05 && n.at <= doneAt + 0.5);
    const found = new Map();
    for (const [label, role, kind, match, after, edge] of MILESTONES) {
      const from = after === null ? startedAt - 0.05 : found.get(after)?.at;
      if (from === undefined) continue;
      const hit = mine.find((n) => n.role === role && n.kind === kind && n.at >= from && match(n.text));
      if (hit) found.set(label, { at: edge === 'done' ? hit.doneAt : hit.at, inside: hit.doneAt - hit.at, kind });
    }
    return { startedAt, found };
  });
  return MILESTONES.map(([label, , kind, , after]) => {
    const seen = perRun.filter((r) => r.found.has(label));
    const at = seen.map((r) => r.found.get(label).at - r.startedAt);
    const hops = seen
      .filter((r) => after === null || r.found.has(after))
      .map((r) => r.found.get(label).at - (after === null ? r.startedAt : r.found.get(after).at));
    const q = (values, p) => round(quantile(values, p), 3);
    return {
      milestone: label,
      after: after ?? 'start',
      atMs: q(at, 0.5),
      hopMs: { p10: q(hops, 0.1), median: q(hops, 0.5), p90: q(hops, 0.9) },
      ...(kind === 'write' && {
        writeMs: q(
          seen.map((r) => r.found.get(label).inside),
          0.5,
        ),
      }),
      seenIn: seen.length,
    };
  });
}
