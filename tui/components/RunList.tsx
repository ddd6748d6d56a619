import { Box, Text } from 'ink';
import { runNotes } from '../../view/run-notes.js';
import type { Run } from '../../api/dto.js';
import { clock, fit, paint, terminalLine, workflowPath } from '../format.js';
import { glyph, statusColor } from '../../view/status.js';
import { protocolLabel } from '../../view/protocol.js';
import { formatDuration } from '../../view/duration.js';

export interface RunListProps {
  /** Only the rows on screen: the caller slices the (possibly 10,000-long) list. */
  runs: readonly Run[];
  /** Index into `runs` of the selected row, or -1. */
  selected: number;
  width: number;
  /** Rows for the list, its column titles included. */
  height: number;
  now: number;
  color: boolean;
  /** Runs in the whole list (after the filter), and before it. */
  total: number;
  filter: string;
}

interface Columns {
  status: number;
  started: number;
  took: number;
  steps: number;
  path: number;
}

/** Column widths for a terminal `width` wide; narrow terminals drop the status word and the start time. */
export function runColumns(width: number): Columns {
  const status = width >= 90 ? 10 : 0;
  const started = width >= 72 ? 9 : 0;
  const took = 8;
  const steps = width >= 72 ? 6 : 5;
  // marker 2 + glyph 2 + id 30 + separators
  const fixed = 2 + 2 + (status && status + 1) + 31 + (started && started + 1) + took + 1 + steps;
  return { status, started, took, steps, path: Math.max(0, width - fixed - 1) };
}

/** The workflow's URL without the scheme; just its path when the host does not fit. */
function workflowName(url: string, width: number): string {
  const full = workflowPath(url);
  if (full.length <= width) return full;
  const path = full.slice(full.indexOf('/') === -1 ? 0 : full.indexOf('/'));
  return path.length <= width ? path : '…' + path.slice(path.length - width + 1);
}

function runCells(run: Run, now: number, c: Columns): { status: string; rest: string; note: string } {
  const took = formatDuration((run.finishedAt ?? now) - run.createdAt);
  // An outage or a failureFunction call still owed takes the workflow's column: it is what matters now.
  const note = runNotes(run, (ms) => clock(ms, now))
    .filter((n) => n.tone !== 'ok')
    .map((n) => n.text)
    .join(' · ');
  // The protocol badge of the web dashboard, as a word before the workflow (an Upstash app's run).
  const label = protocolLabel(run);
  const tag = label === null ? '' : `[${label}] `;
  const cells = [
    fit(run.id, 30),
    c.path > 0 && note === ''
      ? fit(tag + workflowName(run.url, Math.max(1, c.path - tag.length)), c.path)
      : c.path > 0
        ? fit(tag + note, c.path)
        : '',
    c.started ? fit(clock(run.createdAt, now), c.started) : '',
    fit(
      run.finishedAt === null && run.status !== 'queued' ? `${took}…` : run.status === 'queued' ? '' : took,
      c.took,
      'right',
    ),
    fit(String(run.stepsDone), c.steps, 'right'),
  ];
  // Too narrow for the workflow column: the note goes at the end of the row.
  return {
    status: c.status ? fit(run.status, c.status) + ' ' : '',
    rest: cells.filter((cell) => cell !== '').join(' '),
    note: c.path > 0 ? '' : note,
  };
}

/** The run list, newest first: a glyph and colour per status, one row per run on screen. */
export function RunList({ runs, selected, width, height, now, color, total, filter }: RunListProps) {
  const c = runColumns(width);
  const titles = [
    '    ',
    c.status ? fit('STATUS', c.status) + ' ' : '',
    fit('RUN', 30),
    c.path > 0 ? ' ' + fit('WORKFLOW', c.path) : '',
    c.started ? ' ' + fit('STARTED', c.started) : '',
    ' ' + fit('DURATION', c.took, 'right'),
    ' ' + fit('STEPS', c.steps, 'right'),
  ];
  if (runs.length === 0) {
    const empty =
      filter === '' || total === 0
        ? 'No runs yet. Start one: POST to your workflow route, or `wf trigger <url>`.'
        : `No runs match "${filter}" (esc clears the filter).`;
    return (
      <Box flexDirection="column" height={height}>
        <Text bold wrap="truncate-end">
          {titles.join('')}
        </Text>
        <Text dimColor wrap="truncate-end">
          {' '}
          {empty}
        </Text>
      </Box>
    );
  }
  return (
    <Box flexDirection="column" height={height}>
      <Text bold wrap="truncate-end">
        {titles.join('')}
      </Text>
      {runs.slice(0, Math.max(0, height - 1)).map((run, i) => {
        const { status, rest, note } = runCells(run, now, c);
        const isSelected = i === selected;
        return (
          <Text key={run.id} wrap="truncate-end" inverse={isSelected}>
            {isSelected ? '› ' : '  '}
            <Text color={paint(color, statusColor(run.status))}>
              {glyph(run.status)} {status}
            </Text>
            {rest}
            {note === '' ? null : <Text color={paint(color, 'yellow')}> {terminalLine(note)}</Text>}
          </Text>
        );
      })}
    </Box>
  );
}
