import type { Attempt, Run, Step, StepStatus } from '../api/dto.js';
import type { StepKind } from '../protocol/messages.js';
import { outcomeLines } from './attempts.js';
import { formatDuration } from './duration.js';
import { stepKindView } from './step-kinds/index.js';

/**
 * A run on a time axis, the way Inngest's and Vercel's trace views draw one: a row for the run
 * (the queue delay before its first drive, then each drive request) and a row per step, each a
 * list of spans in epoch ms. One authority: the web page turns the spans into percentages
 * (`spanBox`), the TUI into character cells (`barCells`, in timeline-cells.ts); neither works
 * out a time itself.
 *
 * Everything comes from what the API already returns. A step row holds only its latest
 * execution (`startedAt`, and the route's `durationMs`); the executions that failed before it are
 * read back from the attempts' `failed` lines, which carry how long the step ran (`durationMs`)
 * and arrive last on their drive request: such an execution is drawn ending when its drive did
 * (the nearest time the log holds).
 */

/** What a stretch of a row was doing. */
export type SpanKind =
  | 'queued'
  | 'drive'
  | 'executing'
  | 'retry-wait'
  | 'sleeping'
  | 'waiting'
  | 'calling'
  | 'invoking';

export interface Span {
  kind: SpanKind;
  start: number;
  end: number;
  /** Still under way: `end` is `now`, and moves. */
  open: boolean;
  /** The drive request it belongs to, when one is known. */
  attemptSeq: number | null;
}

/** A failed execution (step rows) or a failed drive request (the run row), at its end. */
export interface FailureMark {
  at: number;
  attemptSeq: number | null;
  message: string;
}

/** Where a row sits in a group of steps started together (`Promise.all`): the bracket to draw. */
export type ParallelPosition = 'first' | 'middle' | 'last' | null;

export interface TimelineRow {
  /** `run`, or `step-<index>`. */
  key: string;
  label: string;
  /** Absent on the run row. */
  step: { index: number; kind: StepKind; status: StepStatus } | null;
  spans: Span[];
  failures: FailureMark[];
  parallel: ParallelPosition;
  /** A sleep's wake-up or a wait's timeout while it is still under way: drawn as a note, not on the axis (a day-long sleep would squash the rest). */
  until: number | null;
}

export interface Timeline {
  /** The axis: from the run's creation to its end (or `now`, or the last thing drawn). */
  start: number;
  end: number;
  rows: TimelineRow[];
}

/** Names for the legend and the tooltips. */
export const SPAN_LABELS: Readonly<Record<SpanKind, string>> = {
  queued: 'queued',
  drive: 'drive request',
  executing: 'executing',
  'retry-wait': 'waiting to retry',
  sleeping: 'sleeping',
  waiting: 'waiting for an event',
  calling: 'call in flight',
  invoking: 'child run',
};

interface Execution {
  start: number;
  end: number;
  seq: number;
  message: string;
}

/** Every failed execution the attempts report, by step index, in drive order: one pass over the attempts. */
function failedExecutions(attempts: readonly Attempt[]): Map<number, Execution[]> {
  const byStep = new Map<number, Execution[]>();
  for (const attempt of attempts) {
    const end = attempt.startedAt + attempt.durationMs;
    for (const line of outcomeLines(attempt)) {
      const outcome = line.outcome;
      if (outcome?.t !== 'failed' || !outcome.step) continue;
      const list = byStep.get(outcome.step.index) ?? [];
      list.push({
        start: end - Math.max(0, outcome.step.durationMs),
        end,
        seq: attempt.seq,
        message: outcome.error.message,
      });
      byStep.set(outcome.step.index, list);
    }
  }
  return byStep;
}

function span(kind: SpanKind, start: number, end: number | null, now: number, attemptSeq: number | null = null): Span {
  return { kind, start, end: Math.max(start, end ?? now), open: end === null, attemptSeq };
}

function parallelPositions(steps: readonly Step[]): ParallelPosition[] {
  const sizes = new Map<number, number>();
  for (const s of steps) if (s.group !== null) sizes.set(s.group, (sizes.get(s.group) ?? 0) + 1);
  return steps.map((s, i) => {
    if (s.group === null || (sizes.get(s.group) ?? 0) < 2) return null;
    if (steps[i - 1]?.group !== s.group) return 'first';
    return steps[i + 1]?.group !== s.group ? 'last' : 'middle';
  });
}

/**
 * The queue delay: from the run's creation to its first drive request (a delayed start, flow
 * control, a busy runner), open while there has been none. `attempts` in drive order.
 * @example queueSpan(run, attempts, Date.now()) // { kind: 'queued', start: …, end: …, open: false, attemptSeq: null }
 */
export function queueSpan(run: Run, attempts: readonly Attempt[], now: number): Span {
  const first = attempts[0];
  return span('queued', run.createdAt, first ? first.startedAt : run.finishedAt, now);
}

function runRow(run: Run, attempts: readonly Attempt[], now: number): TimelineRow {
  const spans: Span[] = [queueSpan(run, attempts, now)];
  const failures: FailureMark[] = [];
  for (const a of attempts) {
    spans.push(span('drive', a.startedAt, a.startedAt + a.durationMs, now, a.seq));
    if (a.error) failures.push({ at: a.startedAt + a.durationMs, attemptSeq: a.seq, message: a.error.message });
  }
  return { key: 'run', label: 'run', step: null, spans, failures, parallel: null, until: null };
}

function runStepSpans(
  step: Step,
  earlier: readonly Execution[],
  failedNow: Execution | undefined,
  run: Run,
  now: number,
): { spans: Span[]; failures: FailureMark[] } {
  const spans: Span[] = [];
  const failures: FailureMark[] = [];
  earlier.forEach((e, i) => {
    spans.push(span('executing', e.start, e.end, now, e.seq));
    failures.push({ at: e.end, attemptSeq: e.seq, message: e.message });
    const next = earlier[i + 1]?.start ?? step.startedAt;
    if (next > e.end) spans.push(span('retry-wait', e.end, next, now));
  });
  // The route timed the execution (`durationMs`); `finishedAt` is when the runner learned of its
  // end, which for a failure is the end of the whole drive.
  const end =
    step.finishedAt === null
      ? null
      : step.durationMs === null
        ? step.finishedAt
        : Math.min(step.finishedAt, step.startedAt + step.durationMs);
  spans.push(span('executing', step.startedAt, end, now, failedNow?.seq ?? null));
  if ((step.status === 'failed' || step.status === 'retrying') && end !== null) {
    failures.push({
      at: Math.max(step.startedAt, end),
      attemptSeq: failedNow?.seq ?? null,
      message: step.error?.message ?? failedNow?.message ?? 'failed',
    });
  }
  // Between a failed execution and the next one: open while the run still goes on.
  if (step.status === 'retrying' && end !== null)
    spans.push(span('retry-wait', Math.max(step.startedAt, end), run.finishedAt, now));
  return { spans, failures };
}

function stepRow(
  step: Step,
  failed: readonly Execution[],
  parallel: ParallelPosition,
  run: Run,
  now: number,
): TimelineRow {
  const base = {
    key: `step-${step.index}`,
    label: step.name,
    step: { index: step.index, kind: step.kind, status: step.status },
    parallel,
  };
  const view = stepKindView(step.kind);
  const suspended = view.span;
  if (suspended) {
    const failures =
      step.status === 'failed' && step.finishedAt !== null
        ? [{ at: step.finishedAt, attemptSeq: null, message: step.error?.message ?? 'failed' }]
        : [];
    const until = step.finishedAt === null && view.until !== null ? step.until : null;
    return { ...base, spans: [span(suspended, step.startedAt, step.finishedAt, now)], failures, until };
  }
  // Executions that ended before the latest one started came earlier; the one ending after it is the latest itself.
  const earlier = failed.filter((e) => e.end <= step.startedAt);
  const failedNow = failed.find((e) => e.end > step.startedAt);
  return { ...base, ...runStepSpans(step, earlier, failedNow, run, now), until: null };
}

/**
 * The run drawn on a time axis: the run row first, then one row per step in position order.
 * `now` closes whatever is still under way.
 * @example buildTimeline(run, steps, attempts, Date.now()).rows.map((r) => r.label) // ['run', 'charge-card', 'nap']
 */
export function buildTimeline(run: Run, steps: readonly Step[], attempts: readonly Attempt[], now: number): Timeline {
  const ordered = [...steps].sort((a, b) => a.index - b.index);
  const byDrive = [...attempts].sort((a, b) => a.seq - b.seq);
  const failed = failedExecutions(byDrive);
  const positions = parallelPositions(ordered);
  const rows = [
    runRow(run, byDrive, now),
    ...ordered.map((s, i) => stepRow(s, failed.get(s.index) ?? [], positions[i] ?? null, run, now)),
  ];
  let start = run.createdAt;
  let end = run.finishedAt ?? now;
  // A failureFunction delivery after the end, or another runner's clock a little off, still fits.
  for (const row of rows) {
    for (const s of row.spans) {
      start = Math.min(start, s.start);
      end = Math.max(end, s.end);
    }
  }
  return { start, end: Math.max(end, start + 1), rows };
}

/**
 * Where `at` falls on the axis, from 0 to 1 (clamped).
 * @example axisFraction({ start: 0, end: 200, rows: [] }, 50) // 0.25
 */
export function axisFraction(timeline: Pick<Timeline, 'start' | 'end'>, at: number): number {
  const f = (at - timeline.start) / (timeline.end - timeline.start);
  return Math.min(1, Math.max(0, Number.isFinite(f) ? f : 0));
}

/**
 * A span's box as fractions of the axis' width (the web page's `left` and `width` in %).
 * @example spanBox({ start: 0, end: 200, rows: [] }, { start: 50, end: 100 }) // { left: 0.25, width: 0.25 }
 */
export function spanBox(
  timeline: Pick<Timeline, 'start' | 'end'>,
  s: Pick<Span, 'start' | 'end'>,
): { left: number; width: number } {
  const left = axisFraction(timeline, s.start);
  return { left, width: axisFraction(timeline, s.end) - left };
}

// Tick spacings a reader can add up: 1-2-5 below a second, then whole seconds, minutes, hours, days.
const STEPS_MS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000,
  900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000,
];

export interface Tick {
  /** Time since the axis' start. */
  offsetMs: number;
  fraction: number;
  label: string;
}

/**
 * At most `max` evenly spaced ticks from the axis' start, at a round spacing, labelled with the
 * time since the start (`0`, `500ms`, `1.00s`).
 * @example axisTicks({ start: 0, end: 1000, rows: [] }, 5).map((t) => t.label) // ['0', '200ms', '400ms', '600ms', '800ms', '1.00s']
 */
export function axisTicks(timeline: Pick<Timeline, 'start' | 'end'>, max: number): Tick[] {
  const span = timeline.end - timeline.start;
  const limit = Math.max(1, Math.floor(max));
  const spacing = STEPS_MS.find((ms) => span / ms <= limit) ?? Math.ceil(span / limit / 86_400_000) * 86_400_000;
  const ticks: Tick[] = [];
  for (let offset = 0; offset <= span && ticks.length <= limit; offset += spacing) {
    ticks.push({ offsetMs: offset, fraction: offset / span, label: offset === 0 ? '0' : formatDuration(offset) });
  }
  return ticks;
}

/**
 * One line about a span, for a tooltip or a screen reader.
 * @example describeSpan({ kind: 'executing', start: 0, end: 12, open: false, attemptSeq: 3 }) // 'executing 12ms (attempt 3)'
 */
export function describeSpan(s: Span): string {
  const attempt = s.attemptSeq === null ? '' : ` (attempt ${s.attemptSeq})`;
  return `${SPAN_LABELS[s.kind]} ${formatDuration(s.end - s.start)}${s.open ? ' so far' : ''}${attempt}`;
}

/**
 * One line about a row: what it did, and how many failures it had. The run row counts its drive
 * requests rather than listing them (a long run has hundreds).
 * @example describeRow(row) // 'executing 3.0ms (attempt 1), waiting to retry 1.00s, executing 2.0ms (attempt 2); 1 failure'
 */
export function describeRow(row: TimelineRow): string {
  const drives = row.spans.filter((s) => s.kind === 'drive');
  const listed = row.spans.filter((s) => s.kind !== 'drive').map(describeSpan);
  if (drives.length > 0) listed.push(`${drives.length} drive request${drives.length === 1 ? '' : 's'}`);
  const failures =
    row.failures.length === 0 ? '' : `; ${row.failures.length} failure${row.failures.length === 1 ? '' : 's'}`;
  return `${listed.join(', ')}${failures}`;
}
