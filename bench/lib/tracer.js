// Timestamps of named moments inside one run (store calls, app events), for the time breakdown.
// Inactive by default: `mark` is then a single branch, so untraced measurements pay nothing.

export function createTracer() {
  let t0 = 0;
  let marks = null;
  return {
    mark(name) {
      if (marks && !marks.has(name)) marks.set(name, performance.now() - t0);
    },
    begin() {
      t0 = performance.now();
      marks = new Map();
    },
    /** Stops tracing; returns [name, ms since begin] in time order. */
    end() {
      const out = [...(marks ?? [])].sort((a, b) => a[1] - b[1]);
      marks = null;
      return out;
    },
  };
}
