/**
 * How the frame's rows are shared. The reducer needs the heights to page and to keep the cursor
 * on screen, the components to fill exactly the terminal; both read them here.
 *
 *   status bar      2 rows (title, connection and counts; then a notice or where you are)
 *   body            the rest
 *   log pane        when open: a title row and the app's last lines (`logPaneRows`), taken from the body
 *   footer          1 row (the keys, or the filter prompt)
 */
export interface Size {
  columns: number;
  rows: number;
}

export const STATUS_ROWS = 2;
export const FOOTER_ROWS = 1;
/** Run view: four lines about the run, then the steps' column titles. */
export const RUN_HEADER_ROWS = 5;
/** Step view: the step's title line. */
export const STEP_HEADER_ROWS = 1;

export function bodyRows(size: Size): number {
  return Math.max(1, size.rows - STATUS_ROWS - FOOTER_ROWS);
}

/** Run list rows (below its column titles). */
export function runRows(size: Size): number {
  return Math.max(1, bodyRows(size) - 1);
}

/** Step rows in the run view. */
export function stepRows(size: Size): number {
  return Math.max(1, bodyRows(size) - RUN_HEADER_ROWS);
}

/** Scrolled lines in the step view. */
export function detailRows(size: Size): number {
  return Math.max(1, bodyRows(size) - STEP_HEADER_ROWS);
}

/** The first visible row, moved as little as possible so that `cursor` is on screen. */
export function follow(top: number, cursor: number, count: number, height: number): number {
  let next = Math.min(top, cursor);
  if (cursor >= next + height) next = cursor - height + 1;
  return Math.max(0, Math.min(next, Math.max(0, count - height)));
}

/** Rows of the open log pane, title included: a third of the body, from 4 up to 13, never all of it. */
export function logPaneRows(size: Size): number {
  const body = bodyRows(size);
  return Math.max(0, Math.min(13, Math.max(4, Math.floor(body / 3)), body - 3));
}

/** The size the views get: the terminal less the log pane when it is open. */
export function viewSize(size: Size, logOpen: boolean): Size {
  return logOpen ? { columns: size.columns, rows: size.rows - logPaneRows(size) } : size;
}
