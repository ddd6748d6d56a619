// Wraps a Store: counts each method's calls and the time its (synchronous SQLite) work takes,
// and reports every run that reaches a finished status the moment that change is committed.

// claimDue writes (leases) only when it finds due runs: counted as `claimDue(claimed)` then.
const WRITES = new Set(['createRun', 'createRuns', 'apply', 'claimDue(claimed)', 'release', 'renew', 'releaseAll']);
const FINISHED = new Set(['completed', 'failed', 'cancelled']);

const kindOf = (change) => (change.type === 'run' && change.patch.status ? `run:${change.patch.status}` : change.type);
const STEP_KINDS = new Set(['step-started', 'step-succeeded', 'step-logs']);

/** A commit's tag for the timeline: a drive's end, a batch of steps alone, or its change kinds. */
function applyTag(changes) {
  const kinds = new Set(changes.map(kindOf));
  if (kinds.has('run:completed')) return 'apply(end)';
  if ([...kinds].every((kind) => STEP_KINDS.has(kind))) return 'apply(steps)';
  return `apply(${[...kinds].join(',')})`;
}

/**
 * onCall(name) is told `<method> begin` / `<method> end` (apply: with the change kinds).
 * timing 'sync' (SQLite): a call's time is the synchronous work before its promise returns;
 * 'async' (PostgreSQL): until the promise settles, round trips included (calls may overlap).
 */
export function probeStore(store, onFinished = () => {}, onCall = () => {}, { timing = 'sync' } = {}) {
  const stats = {};
  const probe = new Proxy(store, {
    get(target, key) {
      const value = target[key];
      if (typeof value !== 'function') return value;
      if (key === 'close' || key === 'pragma') return value.bind(target);
      return (...args) => {
        const entry = (stats[key] ??= { calls: 0, ms: 0 });
        entry.calls++;
        const tag = key === 'apply' ? applyTag(args[0]) : String(key);
        onCall(`${tag} begin`);
        const t0 = performance.now();
        let result = value.apply(target, args); // SqliteStore does its work before the promise returns
        if (timing === 'async' && result && typeof result.then === 'function') {
          result = result.finally(() => {
            entry.ms += performance.now() - t0;
            onCall(`${tag} end`);
          });
        } else {
          entry.ms += performance.now() - t0;
          onCall(`${tag} end`);
        }
        if (key === 'claimDue') {
          return result.then((runs) => {
            if (runs.length > 0) (stats['claimDue(claimed)'] ??= { calls: 0, ms: 0 }).calls++;
            return runs;
          });
        }
        if (key !== 'apply') return result;
        return result.then((applied) => {
          for (const change of args[0]) {
            if (change.type === 'run' && FINISHED.has(change.patch.status))
              onFinished(change.runId, change.patch.status);
          }
          return applied; // what the apply wrote: the runner tells its listeners from it
        });
      };
    },
  });
  return {
    store: probe,
    snapshot() {
      const out = {};
      for (const [key, { calls, ms }] of Object.entries(stats)) out[key] = { calls, ms };
      return out;
    },
    /** Write transactions (each one fsync of the WAL under synchronous=FULL) in a snapshot. */
    writes: (snap) => Object.entries(snap).reduce((sum, [key, { calls }]) => sum + (WRITES.has(key) ? calls : 0), 0),
    storeMs: (snap) => Object.values(snap).reduce((sum, { ms }) => sum + ms, 0),
  };
}

export function diffStats(before, after) {
  const out = {};
  for (const [key, value] of Object.entries(after)) {
    const prev = before[key] ?? { calls: 0, ms: 0 };
    out[key] = { calls: value.calls - prev.calls, ms: value.ms - prev.ms };
  }
  return out;
}
