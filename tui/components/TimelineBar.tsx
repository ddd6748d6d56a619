import { Text } from 'ink';
import { paint } from '../format.js';
import { barCells, CELL_COLORS, CELL_GLYPHS, type Cell } from '../../view/timeline-cells.js';
import type { Timeline, TimelineRow } from '../../view/timeline.js';

/**
 * A step's compact bar on the run's time axis: `width` cells (view/timeline-cells.ts), one
 * colour per run of equal cells so a row is a handful of <Text>s, not one per cell.
 */
export function TimelineBar({
  timeline,
  row,
  width,
  color,
}: {
  timeline: Timeline;
  row: TimelineRow | undefined;
  width: number;
  color: boolean;
}) {
  if (!row) return <Text>{' '.repeat(width)}</Text>;
  const cells = barCells(timeline, row, width);
  const runs: { cell: Cell; length: number }[] = [];
  for (const cell of cells) {
    const last = runs[runs.length - 1];
    if (last && last.cell === cell) last.length++;
    else runs.push({ cell, length: 1 });
  }
  return (
    <Text>
      {runs.map(({ cell, length }, i) =>
        cell === null ? (
          <Text key={i}>{' '.repeat(length)}</Text>
        ) : (
          <Text key={i} color={paint(color, CELL_COLORS[cell])}>
            {CELL_GLYPHS[cell].repeat(length)}
          </Text>
        ),
      )}
    </Text>
  );
}
