import type { Run } from '../api/dto.js';

/**
 * What the dashboards show and offer for a run by the protocol that started it. An Upstash-protocol
 * run (`protocol: 'upstash'`, runner-core/qstash/) is driven by its app's SDK through the runner's
 * QStash API: the runner can cancel it but not resume or rerun it (the API answers 409 `UPSTASH_RUN`),
 * so neither dashboard offers those.
 */

/** The badge a run carries beside its status; null for a native run. */
export function protocolLabel(run: Pick<Run, 'protocol'>): string | null {
  return run.protocol === 'upstash' ? 'Upstash' : null;
}

/** Whether resume and rerun apply to the run at all (resume also needs it failed or cancelled). */
export function restartable(run: Pick<Run, 'protocol'>): boolean {
  return run.protocol !== 'upstash';
}

/** Why a run is not restartable, for a notice or a tooltip. */
export const NOT_RESTARTABLE =
  'An Upstash Workflow run is started by its app through the QStash API: it can be cancelled here, not resumed or rerun.';
