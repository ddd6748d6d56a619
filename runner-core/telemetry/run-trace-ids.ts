import { createHash } from 'node:crypto';

/**
 * A run's trace id and the id of its root span, derived from the run id alone. A run is driven in
 * many requests, possibly by several runners and across restarts, and its own span is emitted only
 * when it ends: deriving both ids (rather than storing random ones) lets every drive's span name the
 * same parent without a column or a lookup. SHA-256 so the ids look random to a backend's sampler.
 * @example runTraceIds('wfr_01J…') // { traceId: '9f86d0…' (32 hex), spanId: '4c1a…' (16 hex) }
 */
export function runTraceIds(runId: string): { traceId: string; spanId: string } {
  const hex = createHash('sha256').update(`wfkit-run:${runId}`).digest('hex');
  return { traceId: nonZero(hex.slice(0, 32)), spanId: nonZero(hex.slice(32, 48)) };
}

/** W3C forbids all-zero ids; a hash that gives one (never in practice) gets its last digit set. */
function nonZero(id: string): string {
  return /^0+$/.test(id) ? id.slice(0, -1) + '1' : id;
}
