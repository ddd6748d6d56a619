import type { Color } from './status.js';
import { axisFraction, type SpanKind, type Timeline, type TimelineRow } from './timeline.js';

/**
 * A timeline row as a terminal draws it: `width` character cells, each showing what happened
 * during its slice of the axis. The glyphs carry the meaning, so the bar reads the same under
 * NO_COLOR; colour only decorates (as with statuses, view/status.ts).
 */

export type Cell = SpanKind | 'failure' | null;

export const CELL_GLYPHS: Readonly<Record<Exclude<Cell, null>, string>> = {
  queued: '·',
  drive: '▔',
  executing: '█',
  'retry-wait': '╌',
  sleeping: '░',
  waiting: '▒',
  calling: '▓',
  invoking: '▓',
  failure: '✗',
};

export const CELL_COLORS: Readonly<Record<Exclude<Cell, null>, Color>> = {
  queued: 'gray',
  drive: 'gray',
  executing: 'cyan',
  'retry-wait': 'yellow',
  sleeping: 'blue',
  waiting: 'magenta',
  calling: 'green',
  invoking: 'green',
  failure: 'red',
};

// When spans share a cell, the one that says most wins: a 3 ms execution must stay visible
// inside a cell that is mostly waiting to retry.
const PRIORITY: Readonly<Record<SpanKind, number>> = {
  'retry-wait': 0,
  queued: 1,
  drive: 2,
  sleeping: 3,
  waiting: 3,
  calling: 3,
  invoking: 3,
  executing: 4,
};

/**
 * The row's cells: every span covers at least one cell (a 1 ms step in a minute-long run still
 * shows), and each failure marks the cell it fell in.
 * @example barCells(timeline, row, 10).map((c) => (c ? CELL_GLYPHS[c] : ' ')).join('') // '█✗╌╌╌╌█✗  '
 */
export function barCells(
  timeline: Pick<Timeline, 'start' | 'end'>,
  row: Pick<TimelineRow, 'spans' | 'failures'>,
  width: number,
): Cell[] {
  const n = Math.max(0, Math.floor(width));
  const cells: Cell[] = new Array<Cell>(n).fill(null);
  if (n === 0) return cells;
  // A span covers the cells from the one its start falls in to the one its end falls in.
  const first = (at: number): number => Math.min(n - 1, Math.floor(axisFraction(timeline, at) * n));
  const last = (at: number): number => Math.max(0, Math.ceil(axisFraction(timeline, at) * n) - 1);
  const ordered = [...row.spans].sort((a, b) => PRIORITY[a.kind] - PRIORITY[b.kind]);
  for (const s of ordered) {
    const from = first(s.start);
    for (let i = from; i <= Math.max(from, last(s.end)); i++) cells[i] = s.kind;
  }
  // On the last cell of the execution that failed.
  for (const f of row.failures) cells[last(f.at)] = 'failure';
  return cells;
}

/**
 * The cells as text, one glyph each.
 * @example cellsText(['executing', 'failure', null]) // '█✗ '
 */
export function cellsText(cells: readonly Cell[]): string {
  return cells.map((c) => (c === null ? ' ' : CELL_GLYPHS[c])).join('');
}
