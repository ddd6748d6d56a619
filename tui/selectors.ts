import type { Step } from '../api/dto.js';
import type { DashboardState } from './dashboard-state.js';
import { stepViewLines, type Line } from './step-lines.js';
import { restartable } from '../view/protocol.js';

/** What the views and the keymap read off the state. */

/** The run `c` and `r` act on: the selected row, or the open run. */
export function selectedRunId(state: DashboardState): string | undefined {
  return state.view === 'runs' ? state.visible[state.cursor] : state.detail?.runId;
}

/** Whether `r` and `R` apply to the selected run (not to an Upstash-protocol one); true when none is selected. */
export function selectedRestartable(state: DashboardState): boolean {
  const id = selectedRunId(state);
  const run = id === undefined ? undefined : state.runs.get(id);
  return run === undefined || restartable(run);
}

export function selectedStep(state: DashboardState): Step | undefined {
  return state.detail?.steps[state.stepCursor];
}

/** The step view's lines, wrapped to the terminal's width. */
export function detailLines(state: DashboardState): Line[] {
  const step = selectedStep(state);
  return step && state.detail
    ? stepViewLines(
        step,
        state.detail.attempts,
        state.size.columns,
        state.detail.logs,
        state.runs.get(state.detail.runId),
      )
    : [];
}
