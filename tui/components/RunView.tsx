import { Box, Text } from 'ink';
import { runNotes } from '../../view/run-notes.js';
import type { Attempt, Run, Step } from '../../api/dto.js';
import { clock, fit, paint, terminalLine, truncate, workflowPath } from '../format.js';
import { glyph, statusColor } from '../../view/status.js';
import { protocolLabel } from '../../view/protocol.js';
import { formatDuration } from '../../view/duration.js';
import { RUN_HEADER_ROWS } from '../layout.js';
import type { Detail } from '../state.js';
import { displayOutput } from '../../view/step-value.js';
import { runParent } from '../../view/links.js';
import { stepKindView } from '../../view/step-kinds/index.js';
import { buildTimeline, queueSpan, type Timeline } from '../../view/timeline.js';
import { TimelineBar } from './TimelineBar.js';

export interface RunViewProps {
  run: Run | undefined;
  detail: Detail;
  /** Selected step (index into detail.steps) and the first step row on screen. */
  cursor: number;
  top: number;
  width: number;
  height: number;
  now: number;
  color: boolean;
}

/** What a sleep, wait or call step is about (its wake-up time, its event, its HTTP request and answer), as its kind shows it. */
export function stepDetail(step: Step, now: number): string {
  return stepKindView(step.kind).row(step, (ms) => clock(ms, now));
}

/** Brackets parallel steps (a `group` shared by several steps): ┌ │ └. */
function groupMarks(steps: readonly Step[]): string[] {
  const sizes = new Map<number, number>();
  for (const s of steps) if (s.group !== null) sizes.set(s.group, (sizes.get(s.group) ?? 0) + 1);
  return steps.map((s, i) => {
    if (s.group === null || (sizes.get(s.group) ?? 0) < 2) return '  ';
    const first = steps[i - 1]?.group !== s.group;
    const last = steps[i + 1]?.group !== s.group;
    return first ? '┌ ' : last ? '└ ' : '│ ';
  });
}

/**
 * Step table widths: narrow terminals drop the kind and the status word (the glyph stays). From
 * 110 columns a timeline bar per step sits before the detail, wider from 140.
 */
export function stepColumns(width: number): {
  name: number;
  kind: number;
  status: number;
  tries: number;
  took: number;
  bar: number;
} {
  const bar = width >= 140 ? 24 : width >= 110 ? 16 : 0;
  // Kind is 7 wide: "invoke" and a space.
  if (width >= 80) return { name: width >= 120 ? 28 : 20, kind: 7, status: 11, tries: 8, took: 8, bar };
  return { name: Math.max(8, Math.min(20, width - 45)), kind: 0, status: 2, tries: 5, took: 7, bar: 0 };
}

function runSummary(run: Run, attempts: readonly Attempt[], now: number): [string, string, string] {
  const took = formatDuration((run.finishedAt ?? now) - run.createdAt);
  // Before the first drive (view/timeline.ts); unknown while the attempts of a driven run are still loading.
  const queue = queueSpan(run, attempts, now);
  const queued =
    attempts.length === 0 && run.attempts > 0
      ? ''
      : ` · queued ${formatDuration(queue.end - queue.start)}${queue.open ? ' so far' : ''}`;
  // An outage or a failureFunction call leads the result line (it says when the next try is).
  const notes = runNotes(run, (ms) => clock(ms, now))
    .map((n) => n.text)
    .join(' · ');
  const next =
    notes === '' && run.nextAt !== null && run.finishedAt === null ? ` · next drive ${clock(run.nextAt, now)}` : '';
  const retry =
    run.failures > 0 ? ` · ${run.failures} failure${run.failures === 1 ? '' : 's'} (retries ${run.retries})` : '';
  const headers = Object.keys(run.headers).length;
  const outcome = run.error
    ? `error  ${run.error.name}: ${run.error.message}`
    : run.status === 'completed'
      ? `output  ${displayOutput(run)}`
      : '';
  const result = notes === '' ? outcome : outcome === '' ? notes : `${notes} · ${outcome}`;
  return [
    `started ${clock(run.createdAt, now)}${queued} · ${run.finishedAt === null ? 'running for' : 'took'} ${took} · ${run.stepsDone} step${run.stepsDone === 1 ? '' : 's'} done · ${run.attempts} attempt${run.attempts === 1 ? '' : 's'}${retry}${next}`,
    `payload  ${run.body === '' ? '(empty)' : run.body} · ${headers} header${headers === 1 ? '' : 's'}`,
    result,
  ];
}

/** One run: what it is and how it went, then its steps in order (parallel ones bracketed). */
export function RunView({ run, detail, cursor, top, width, height, now, color }: RunViewProps) {
  if (!run) return <Text dimColor>Loading {detail.runId}…</Text>;
  const [times, payload, result] = runSummary(run, detail.attempts, now);
  const c = stepColumns(width);
  const rows = Math.max(1, height - RUN_HEADER_ROWS);
  const marks = groupMarks(detail.steps);
  const visible = detail.steps.slice(top, top + rows);
  const parent = runParent(run);
  const bar = c.bar > 0 ? `${fit('TIMELINE', c.bar)}  ` : '';
  const titles = `    ${fit('#', 3, 'right')} ${fit('STEP', c.name)} ${fit('KIND', c.kind)}${fit(c.status > 2 ? 'STATUS' : '', c.status)} ${fit(c.tries > 5 ? 'ATTEMPTS' : 'TRIES', c.tries)} ${fit(c.took >= 8 ? 'DURATION' : 'TOOK', c.took, 'right')}  ${bar}DETAIL`;
  // The same geometry as the web page's timeline (view/timeline.ts), drawn in character cells.
  const timeline: Timeline | null =
    c.bar > 0 && detail.steps.length > 0 ? buildTimeline(run, detail.steps, detail.attempts, now) : null;
  const rowsByKey = new Map(timeline?.rows.map((row) => [row.key, row]));
  return (
    <Box flexDirection="column" height={height}>
      <Text wrap="truncate-end">
        <Text bold color={paint(color, statusColor(run.status))}>
          {glyph(run.status)} {run.status}
        </Text>
        {'  '}
        <Text bold>{run.id}</Text>
        {'  '}
        {protocolLabel(run) === null ? null : <Text color={paint(color, 'green')}>{`[${protocolLabel(run)}]  `}</Text>}
        {parent ? <Text dimColor>{`child of ${parent.parentRunId} step ${parent.parentStepIndex}  `}</Text> : null}
        {workflowPath(run.url)}
      </Text>
      <Text wrap="truncate-end">{times}</Text>
      <Text wrap="truncate-end" dimColor>
        {truncate(payload, width)}
      </Text>
      <Text wrap="truncate-end" color={run.error ? paint(color, 'red') : undefined}>
        {truncate(result, width)}
      </Text>
      <Text bold wrap="truncate-end">
        {titles}
      </Text>
      {detail.error ? <Text color={paint(color, 'red')}>✗ {terminalLine(detail.error)}</Text> : null}
      {!detail.error && detail.steps.length === 0 ? (
        <Text dimColor>{detail.loading ? '  loading steps…' : '  No steps yet.'}</Text>
      ) : null}
      {visible.map((step, i) => {
        const index = top + i;
        const isSelected = index === cursor;
        const attempts =
          step.failures === 0
            ? String(step.reportedExecutions)
            : c.tries >= 8
              ? `${step.reportedExecutions} (${step.failures}✗)`
              : `${step.reportedExecutions} ${step.failures}✗`;
        const kind = fit(step.kind, c.kind);
        return (
          <Text key={step.index} wrap="truncate-end" inverse={isSelected}>
            {isSelected ? '› ' : '  '}
            {marks[index]}
            {fit(String(step.index), 3, 'right')} {fit(step.name, c.name)} {kind}
            <Text color={paint(color, statusColor(step.status))}>
              {fit(`${glyph(step.status)} ${c.status > 2 ? step.status : ''}`, c.status)}
            </Text>{' '}
            {fit(attempts, c.tries)}{' '}
            {fit(
              formatDuration(step.durationMs ?? (step.finishedAt === null ? now - step.startedAt : null)),
              c.took,
              'right',
            )}
            {'  '}
            {timeline ? (
              <TimelineBar timeline={timeline} row={rowsByKey.get(`step-${step.index}`)} width={c.bar} color={color} />
            ) : null}
            {timeline ? '  ' : null}
            {terminalLine(stepDetail(step, now))}
          </Text>
        );
      })}
    </Box>
  );
}
