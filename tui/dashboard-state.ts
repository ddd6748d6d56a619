import type { Attempt, Step, StepLog } from '../api/dto.js';
import type { Size } from './layout.js';
import type { LogEntry } from './log-feed.js';
import type { RunTable } from './run-table.js';

/*
 * The shape of the dashboard's state, apart from the reducer that makes it (state.ts): the
 * selectors and components read these types, and the reducer reads the selectors, so the types
 * sit below both.
 */

export type View = 'runs' | 'run' | 'step';
export type Connection = 'connecting' | 'live' | 'offline';

export interface LogState {
  /** There is a log to show (`wf dev` manages an app): `l` toggles the pane. */
  enabled: boolean;
  open: boolean;
  /** The newest lines, at most `LOG_LINES` (state.ts). */
  lines: readonly LogEntry[];
  /** Lines received in all, so the pane can say how many it dropped. */
  total: number;
}

/** The open run's steps and attempt log, kept live from events once loaded. */
export interface Detail {
  runId: string;
  loading: boolean;
  error: string | null;
  steps: readonly Step[];
  attempts: readonly Attempt[];
  /** What the steps printed (read with the run, not carried by events). */
  logs: readonly StepLog[];
}

export interface DashboardState {
  runs: RunTable;
  /** Every run id, newest first. */
  order: readonly string[];
  /** The ids the filter lets through (`order` itself when there is no filter). */
  visible: readonly string[];
  filter: string;
  /** The runs the runner found for the filter's `key:value` terms (tui/search.ts), for that text only. */
  found: { text: string; ids: ReadonlySet<string> } | null;
  /** The `/` prompt is open: typing edits the filter. */
  filtering: boolean;
  view: View;
  /** Run list: selected row and first row on screen (indexes into `visible`). */
  cursor: number;
  top: number;
  detail: Detail | null;
  stepCursor: number;
  stepTop: number;
  /** Step view: first line on screen. */
  scroll: number;
  size: Size;
  now: number;
  connection: Connection;
  notice: { text: string; error: boolean; at: number } | null;
  log: LogState;
}
