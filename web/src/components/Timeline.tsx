/** @jsxImportSource preact */
import type { JSX } from 'preact';
import { useMemo } from 'preact/hooks';
import type { Attempt, Run, Step } from '../../../api/dto.js';
import { formatRelative } from '../../../view/duration.js';
import { stepKindView } from '../../../view/step-kinds/index.js';
import {
  axisFraction,
  axisTicks,
  buildTimeline,
  describeRow,
  describeSpan,
  spanBox,
  SPAN_LABELS,
  type SpanKind,
  type TimelineRow,
} from '../../../view/timeline.js';
import { paths } from '../router.js';
import { Link } from './Common.js';

const FINISHED = new Set(['completed', 'failed', 'cancelled']);
const percent = (fraction: number): string => `${(fraction * 100).toFixed(3)}%`;

/**
 * The run on a time axis (view/timeline.ts does the arithmetic): the queue delay and the drive
 * requests, then a bar per step; a bar opens its step, a red mark (where an execution or a
 * drive failed) its attempt. `steps` and `attempts` must keep their identity while unchanged.
 * Positions are set through the DOM's style object, which the page's CSP allows (no inline style
 * attributes in markup).
 */
export function Timeline(props: {
  run: Run;
  steps: Step[];
  attempts: Attempt[];
  selected?: number;
  now: number;
}): JSX.Element {
  const { run, steps, attempts, selected, now } = props;
  // The page re-renders every second; a finished run's timeline does not change with the clock.
  const clock = FINISHED.has(run.status) ? 0 : now;
  const timeline = useMemo(() => buildTimeline(run, steps, attempts, now), [run, steps, attempts, clock]);
  const ticks = axisTicks(timeline, 8);
  const kinds = new Set<SpanKind>(timeline.rows.flatMap((row) => row.spans.map((s) => s.kind)));
  const failed = timeline.rows.some((row) => row.failures.length > 0);
  return (
    <div class="timeline" data-testid="timeline">
      <div class="tl-row tl-axis" aria-hidden="true">
        <span />
        <span class="tl-track">
          {ticks.map((tick) => (
            // Near the right edge a label runs leftwards from its tick, so it stays inside the panel.
            <span
              key={tick.offsetMs}
              class={`tl-tick${tick.fraction > 0.85 ? ' tl-tick-end' : ''}`}
              style={{ left: percent(tick.fraction) }}
            >
              {tick.label}
            </span>
          ))}
        </span>
      </div>
      <ol class="tl-rows">
        {timeline.rows.map((row) => (
          <TimelineLine
            key={row.key}
            row={row}
            runId={run.id}
            timeline={timeline}
            selected={row.step !== null && row.step.index === selected}
            now={now}
          />
        ))}
      </ol>
      <ul class="tl-legend" aria-label="Legend">
        {[...kinds].map((kind) => (
          <li key={kind}>
            <span class={`tl-swatch tl-${kind}`} />
            {SPAN_LABELS[kind]}
          </li>
        ))}
        {failed ? (
          <li>
            <span class="tl-swatch tl-failure-swatch" />
            failed attempt
          </li>
        ) : null}
      </ul>
    </div>
  );
}

function TimelineLine(props: {
  row: TimelineRow;
  runId: string;
  timeline: { start: number; end: number };
  selected: boolean;
  now: number;
}): JSX.Element {
  const { row, runId, timeline, selected, now } = props;
  const href = row.step === null ? paths.run(runId) : paths.step(runId, row.step.index);
  const summary = describeRow(row);
  const name = row.step === null ? 'Run' : `#${row.step.index} ${row.label}`;
  return (
    <li
      class={`tl-row${selected ? ' selected' : ''}${row.parallel ? ` tl-parallel tl-parallel-${row.parallel}` : ''}`}
      data-testid="timeline-row"
      data-key={row.key}
      data-step-index={row.step?.index}
    >
      <Link href={href} class="tl-label" label={`${name}: ${summary}`} current={selected}>
        {row.step === null ? <span class="tl-name">run</span> : <span class="tl-index">#{row.step.index}</span>}
        {row.step === null ? null : (
          <span class="tl-name" title={row.label}>
            {row.label}
          </span>
        )}
      </Link>
      <span class="tl-track">
        <Link href={href} class="tl-hit" label={`${name} on the timeline: ${summary}`}>
          {row.spans.map((s, i) => {
            const box = spanBox(timeline, s);
            return (
              <span
                key={i}
                class={`tl-span tl-${s.kind}${s.open ? ' tl-open' : ''}`}
                style={{ left: percent(box.left), width: percent(box.width) }}
                title={describeSpan(s)}
                data-testid="timeline-span"
                data-kind={s.kind}
              />
            );
          })}
        </Link>
        {row.failures.map((f, i) => {
          const what = `failed${f.attemptSeq === null ? '' : ` (attempt ${f.attemptSeq})`}: ${f.message}`;
          return (
            <span
              key={`f${i}`}
              class="tl-failure-at"
              style={{ left: percent(axisFraction(timeline, f.at)) }}
              title={what}
              data-testid="timeline-failure"
            >
              {f.attemptSeq === null ? (
                <span class="tl-failure" />
              ) : (
                <Link
                  href={paths.attempt(runId, f.attemptSeq)}
                  class="tl-failure"
                  label={`Open attempt ${f.attemptSeq}, ${what}`}
                >
                  {null}
                </Link>
              )}
            </span>
          );
        })}
        {row.until !== null ? (
          <span class="tl-note">
            {(row.step && stepKindView(row.step.kind).until) ?? 'wakes'} {formatRelative(row.until, now)}
          </span>
        ) : null}
      </span>
    </li>
  );
}
