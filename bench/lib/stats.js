// Order statistics over a list of numbers (milliseconds, bytes, ...).

/** The q-quantile (0..1) by nearest rank on a sorted copy. */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

export const median = (values) => quantile(values, 0.5);
export const p99 = (values) => quantile(values, 0.99);

export function summarize(values) {
  return {
    n: values.length,
    median: median(values),
    p99: p99(values),
    min: Math.min(...values),
    max: Math.max(...values),
  };
}

/** Rounds for display and JSON, keeping small numbers readable. */
export function round(value, digits = 3) {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Pools the raw samples of several measurements of one thing into one summary. */
export function pooled(...measurements) {
  return summarize(measurements.flatMap((m) => m.samples));
}

/** A summary without its raw samples, for results.json. */
export function withoutSamples({ samples, ...summary }) {
  return summary;
}
