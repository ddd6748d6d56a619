import { FINISHED_RUN_STATUSES, RUN_STATUSES, type RunStatus, type StepStatus } from '../api/dto.js';

/**
 * Status names, glyphs and colours: one table for `wf logs`, `wf runs`, the TUI and the web
 * page. The glyphs carry the meaning, so everything reads the same with NO_COLOR; colour only
 * decorates. The status lists themselves come from the API contract (api/dto.ts).
 */
export { FINISHED_RUN_STATUSES, RUN_STATUSES };
export type { RunStatus, StepStatus };

export const STEP_STATUSES: readonly StepStatus[] = ['running', 'retrying', 'succeeded', 'failed', 'cancelled'];

export type Status = RunStatus | StepStatus;
export type Color = 'green' | 'red' | 'yellow' | 'cyan' | 'blue' | 'magenta' | 'gray';

const LOOK: Record<Status, { glyph: string; color: Color }> = {
  queued: { glyph: '○', color: 'gray' },
  running: { glyph: '▶', color: 'cyan' },
  sleeping: { glyph: '◔', color: 'blue' },
  waiting: { glyph: '◌', color: 'magenta' },
  completed: { glyph: '✓', color: 'green' },
  succeeded: { glyph: '✓', color: 'green' },
  retrying: { glyph: '↻', color: 'yellow' },
  failed: { glyph: '✗', color: 'red' },
  cancelled: { glyph: '⊘', color: 'gray' },
};

/**
 * The glyph of a run or step status; `?` for a status this build does not know (a newer runner).
 * @example glyph('failed') // '✗'
 */
export function glyph(status: Status): string {
  return LOOK[status]?.glyph ?? '?';
}

/** @example statusColor('retrying') // 'yellow' */
export function statusColor(status: Status): Color {
  return LOOK[status]?.color ?? 'gray';
}

/**
 * Narrows user input (a URL's `?status=`, a flag) to a run status.
 * @example isRunStatus('sleeping') // true
 */
export function isRunStatus(value: unknown): value is RunStatus {
  return (RUN_STATUSES as readonly unknown[]).includes(value);
}

/** A count of zero for every run status: the status bar's starting point. */
export function zeroCounts(): Record<RunStatus, number> {
  return Object.fromEntries(RUN_STATUSES.map((status) => [status, 0])) as Record<RunStatus, number>;
}
