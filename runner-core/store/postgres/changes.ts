import { attemptParams, toJson } from '../rows.js';
import { stepLogParams } from '../step-log-rows.js';
import { RUN_PATCH_FIELDS, type RunPatch, type RunPatchField } from '../run-patch.js';
import type { Change } from '../types.js';

/** BIGINT columns take whole milliseconds; a fractional time (a route's `performance.now()`) is rounded. */
export function ms(value: number): number;
export function ms(value: number | null): number | null;
export function ms(value: number | null): number | null {
  return value === null ? null : Math.round(value);
}

/** A patch as `wfkit_apply` reads it (its lines come from the same list, run-patch.ts). */
function patchRow(patch: RunPatch): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [field, { type }] of Object.entries(RUN_PATCH_FIELDS)) {
    const value = patch[field as RunPatchField];
    if (value === undefined) continue;
    row[field] = type === 'json' ? toJson(value) : type === 'ms' ? ms(value as number | null) : value;
  }
  return row;
}

/**
 * A change as the JSON object `wfkit_apply` (functions.ts) reads: every value already a
 * column value (JSON columns as text, exactly as the SQLite store writes them; times in whole
 * milliseconds) and the run id at the top. Fields left `undefined` disappear in JSON, which is how
 * a run patch says "leave this column alone".
 */
export function changeRow(change: Change): Record<string, unknown> {
  switch (change.type) {
    case 'step-started':
      return { ...change, at: ms(change.at) };
    case 'step-suspended':
      return { ...change, until: ms(change.until), request: toJson(change.request), at: ms(change.at) };
    case 'executions-reported':
      return change;
    case 'release':
    case 'steps-closed':
      return change.type === 'release' ? change : { ...change, at: ms(change.at) };
    case 'step-succeeded': {
      const { started, ...row } = change;
      return {
        ...row,
        at: ms(change.at),
        startedAt: ms(change.at - change.durationMs),
        group: started?.group ?? null,
        startedHere: started ? 1 : 0,
      };
    }
    case 'step-failed':
      return {
        ...change,
        error: toJson(change.error),
        at: ms(change.at),
        startedAt: ms(change.at - change.durationMs),
      };
    case 'attempt': {
      const row = attemptParams(change.attempt);
      return { ...row, type: 'attempt', startedAt: ms(row.startedAt as number) };
    }
    case 'run':
      return { type: 'run', runId: change.runId, at: ms(change.at), patch: patchRow(change.patch) };
    case 'step-logs':
      // Never reaches wfkit_apply: store.ts hands step logs to wfkit_apply_step_logs.
      return stepLogParams(change);
  }
}
