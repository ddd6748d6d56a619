import { UNFINISHED } from './claimable.js';
import type { Run } from './records.js';

/**
 * How a patch field's value is held in its column: `text` as it is, `json` as its JSON text,
 * `int` a count, `ms` epoch milliseconds or a duration (PostgreSQL's BIGINT takes whole ones).
 */
export type PatchColumnType = 'text' | 'json' | 'int' | 'ms';

export interface PatchField {
  column: string;
  type: PatchColumnType;
  /** Set only while the run is unfinished: a finished run keeps its status (see `RunPatch`). */
  whileUnfinished?: true;
}

/**
 * The fields a run patch may set, and their columns: the one list both stores build their run
 * update from (sqlite/store.ts's statement, PostgreSQL's `wfkit_apply` in postgres/functions.ts, and
 * postgres/changes.ts's row). A new run field the runner changes as it drives is one line here
 * (and its column in a migration, store/migrations/). Column names are constants, so SQL built
 * from them is safe.
 */
export const RUN_PATCH_FIELDS = {
  status: { column: 'status', type: 'text', whileUnfinished: true },
  nextAt: { column: 'next_at', type: 'ms' },
  failures: { column: 'failures', type: 'int' },
  finishedAt: { column: 'finished_at', type: 'ms' },
  output: { column: 'output', type: 'text' },
  error: { column: 'error', type: 'json' },
  attempts: { column: 'attempts', type: 'int' },
  unreachableSince: { column: 'unreachable_since', type: 'ms' },
  failureCall: { column: 'failure_call', type: 'text' },
  failureCallAttempts: { column: 'failure_call_attempts', type: 'int' },
  alert: { column: 'alert', type: 'text' },
  alertAttempts: { column: 'alert_attempts', type: 'int' },
  failureCallNextAt: { column: 'failure_call_next_at', type: 'ms' },
  alertNextAt: { column: 'alert_next_at', type: 'ms' },
} as const satisfies { [K in keyof Run]?: PatchField };

export type RunPatchField = keyof typeof RUN_PATCH_FIELDS;

/**
 * Fields of a run the runner changes as it drives it. `undefined` (absent) leaves a column as it
 * is; `null` sets it to NULL (a sleeping run has no nextAt). A finished run keeps its status: a
 * drive that settles after a cancel (or on another runner) cannot bring it back to life.
 */
export type RunPatch = Partial<Pick<Run, RunPatchField>>;

/**
 * The `SET` list of a run patch's UPDATE, in a dialect's spelling: `isSet` says whether the patch
 * carries a field, `value` reads it. Each column keeps its value unless the patch sets it.
 */
export function patchAssignments(spell: {
  isSet(field: RunPatchField, spec: PatchField): string;
  value(field: RunPatchField, spec: PatchField): string;
}): string[] {
  return Object.entries(RUN_PATCH_FIELDS).map(([name, spec]: [string, PatchField]) => {
    const field = name as RunPatchField;
    const guard = spec.whileUnfinished ? ` AND ${UNFINISHED}` : '';
    const value = spell.value(field, spec);
    return `${spec.column} = CASE WHEN ${spell.isSet(field, spec)}${guard} THEN ${value} ELSE ${spec.column} END`;
  });
}
