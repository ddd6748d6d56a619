import type { OriginCount } from './slots.js';

/** A Prometheus label value: backslash, double quote and newline escaped. */
const label = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * The gate's two `/metrics` families (this process's): requests in flight per destination origin,
 * and work deferred for want of a slot there. Only origins with something in flight or waiting
 * are listed, so the label set stays as small as the traffic of the moment.
 */
export function egressMetricLines(counts: { calls: OriginCount[]; apps: OriginCount[] }): {
  inFlight: string[];
  waiting: string[];
} {
  const inFlight: string[] = [];
  const waiting: string[] = [];
  for (const [kind, list] of [
    ['call', counts.calls],
    ['app', counts.apps],
  ] as const) {
    for (const count of list) {
      const labels = `{kind="${kind}",origin="${label(count.origin)}"}`;
      inFlight.push(`wfkit_egress_in_flight${labels} ${count.inFlight}`);
      waiting.push(`wfkit_egress_waiting${labels} ${count.waiting}`);
    }
  }
  return { inFlight, waiting };
}
