import { describe, expect, it } from 'vitest';
import type { Attempt } from '../../api/dto.js';
import type { Outcome } from '../../protocol/outcome.js';
import { barCells, cellsText } from '../../view/timeline-cells.js';
import {
  axisFraction,
  axisTicks,
  buildTimeline,
  describeRow,
  describeSpan,
  spanBox,
  type Span,
  type TimelineRow,
} from '../../view/timeline.js';
import { attempt, run, step, T0 } from './records.js';

const boom = { name: 'Error', message: 'boom' };
const at = (
  seq: number,
  startedAt: number,
  durationMs: number,
  outcomes: Outcome[],
  patch: Partial<Attempt> = {},
): Attempt => ({ ...attempt(seq, outcomes), startedAt: T0 + startedAt, durationMs, ...patch });
const failedIn = (index: number, durationMs: number): Outcome => ({
  t: 'failed',
  error: boom,
  retryable: true,
  step: { index, name: `s${index}`, kind: 'run', durationMs },
});
const started = (index: number): Outcome => ({ t: 'started', index, name: `s${index}`, kind: 'run', group: index });
const rel = (spans: readonly Span[]) => spans.map((s) => [s.kind, s.start - T0, s.end - T0, s.open]);

describe('buildTimeline: the run row', () => {
  it('shows the queue delay before the first drive, then each drive request, failed ones marked', () => {
    const attempts = [
      at(1, 40, 10, [], {
        error: { name: 'EndpointError', message: 'refused' },
        outcome: 'error',
        responseStatus: null,
      }),
      at(2, 1050, 20, [{ t: 'done' }]),
    ];
    const t = buildTimeline(run({ status: 'completed', finishedAt: T0 + 1070 }), [], attempts, T0 + 99_999);
    const row = t.rows[0]!;
    expect(row.key).toBe('run');
    expect(rel(row.spans)).toEqual([
      ['queued', 0, 40, false],
      ['drive', 40, 50, false],
      ['drive', 1050, 1070, false],
    ]);
    expect(row.failures).toEqual([{ at: T0 + 50, attemptSeq: 1, message: 'refused' }]);
    // A finished run's axis ends when it finished, whatever `now` is.
    expect([t.start - T0, t.end - T0]).toEqual([0, 1070]);
    expect(describeRow(row)).toBe('queued 40ms, 2 drive requests; 1 failure');
  });

  it('keeps a run that never got a drive queued up to now, still open', () => {
    const t = buildTimeline(run({ status: 'queued' }), [], [], T0 + 5000);
    expect(rel(t.rows[0]!.spans)).toEqual([['queued', 0, 5000, true]]);
    expect(t.end - T0).toBe(5000);
  });
});

describe('buildTimeline: steps', () => {
  it('draws each failed execution of a retried step, the waits between them, and the one that succeeded', () => {
    // Attempts 1 and 2 fail in step 0 after 3 ms and 4 ms; attempt 3 runs it to success.
    const attempts = [
      at(1, 0, 10, [started(0), failedIn(0, 3)]),
      at(2, 1010, 10, [started(0), failedIn(0, 4)]),
      at(3, 3020, 10, [started(0), { t: 'done' }]),
    ];
    const s = step({
      status: 'succeeded',
      startedAt: T0 + 3022,
      finishedAt: T0 + 3027,
      durationMs: 5,
      reportedExecutions: 3,
      failures: 2,
    });
    const row = buildTimeline(run({ status: 'completed', finishedAt: T0 + 3030 }), [s], attempts, T0 + 4000).rows[1]!;
    expect(rel(row.spans)).toEqual([
      ['executing', 7, 10, false],
      ['retry-wait', 10, 1016, false],
      ['executing', 1016, 1020, false],
      ['retry-wait', 1020, 3022, false],
      ['executing', 3022, 3027, false],
    ]);
    expect(row.failures.map((f) => [f.at - T0, f.attemptSeq])).toEqual([
      [10, 1],
      [1020, 2],
    ]);
    expect(row.spans.map((sp) => sp.attemptSeq)).toEqual([1, null, 2, null, null]);
  });

  it('a step waiting for its retry: the latest failure comes from the step, the wait is open until now', () => {
    const attempts = [at(1, 0, 10, [started(0), failedIn(0, 4)])];
    const s = step({ status: 'retrying', startedAt: T0 + 5, finishedAt: T0 + 9, failures: 1, error: boom });
    const row = buildTimeline(run({ status: 'running' }), [s], attempts, T0 + 600).rows[1]!;
    expect(rel(row.spans)).toEqual([
      ['executing', 5, 9, false],
      ['retry-wait', 9, 600, true],
    ]);
    expect(row.failures).toEqual([{ at: T0 + 9, attemptSeq: 1, message: 'boom' }]);
  });

  it('draws the latest execution as long as the route timed it, not until the runner heard of its end', () => {
    const s = step({
      status: 'failed',
      startedAt: T0 + 100,
      finishedAt: T0 + 135,
      durationMs: 0.5,
      failures: 1,
      error: boom,
    });
    const row = buildTimeline(run({ status: 'failed', finishedAt: T0 + 140 }), [s], [], T0 + 600).rows[1]!;
    expect(rel(row.spans)).toEqual([['executing', 100, 100.5, false]]);
    expect(row.failures.map((f) => f.at - T0)).toEqual([100.5]);
  });

  it('a step that failed for good is marked at its end, with its error', () => {
    const s = step({
      status: 'failed',
      startedAt: T0 + 5,
      finishedAt: T0 + 9,
      failures: 1,
      error: { name: 'NonRetryableError', message: 'card declined' },
    });
    const row = buildTimeline(run({ status: 'failed', finishedAt: T0 + 12 }), [s], [], T0 + 600).rows[1]!;
    expect(rel(row.spans)).toEqual([['executing', 5, 9, false]]);
    expect(row.failures).toEqual([{ at: T0 + 9, attemptSeq: null, message: 'card declined' }]);
  });

  it.each([
    ['sleep', 'sleeping'],
    ['wait', 'waiting'],
    ['call', 'calling'],
    ['invoke', 'invoking'],
  ] as const)('a %s step is one %s span, open while under way', (kind, spanKind) => {
    const s = step({ kind, index: 1, startedAt: T0 + 100, until: T0 + 3_600_000 });
    const row = buildTimeline(run({ status: 'sleeping' }), [s], [], T0 + 900).rows[1]!;
    expect(rel(row.spans)).toEqual([[spanKind, 100, 900, true]]);
    // A sleep's wake-up or a wait's timeout is a note, not the axis' end: an hour would squash the rest.
    expect(row.until).toBe(kind === 'sleep' || kind === 'wait' ? T0 + 3_600_000 : null);
    expect(buildTimeline(run({ status: 'sleeping' }), [s], [], T0 + 900).end - T0).toBe(900);
  });

  it('a wait that timed out is marked failed; a finished sleep has no note', () => {
    const wait = step({
      kind: 'wait',
      index: 0,
      status: 'failed',
      startedAt: T0,
      finishedAt: T0 + 50,
      until: T0 + 50,
      error: { name: 'WaitTimeoutError', message: 'timed out' },
    });
    const nap = step({
      kind: 'sleep',
      index: 1,
      status: 'succeeded',
      startedAt: T0 + 60,
      finishedAt: T0 + 80,
      until: T0 + 80,
    });
    const [, w, n] = buildTimeline(run({ status: 'failed', finishedAt: T0 + 90 }), [wait, nap], [], T0 + 100).rows;
    expect(w!.failures.map((f) => f.message)).toEqual(['timed out']);
    expect([n!.until, rel(n!.spans)]).toEqual([null, [['sleeping', 60, 80, false]]]);
  });

  it('orders rows by position and brackets steps started together', () => {
    const steps = [
      step({ index: 3, group: 2, name: 'merge' }),
      step({ index: 1, group: 1, name: 'a' }),
      step({ index: 0, group: 0, name: 'pre' }),
      step({ index: 2, group: 1, name: 'b' }),
    ];
    const rows = buildTimeline(run(), steps, [], T0 + 10).rows;
    expect(rows.map((r) => [r.label, r.parallel])).toEqual([
      ['run', null],
      ['pre', null],
      ['a', 'first'],
      ['b', 'last'],
      ['merge', null],
    ]);
    const three = buildTimeline(
      run(),
      [step({ index: 0, group: 4 }), step({ index: 1, group: 4 }), step({ index: 2, group: 4 })],
      [],
      T0 + 10,
    ).rows;
    expect(three.slice(1).map((r) => r.parallel)).toEqual(['first', 'middle', 'last']);
  });

  it('stretches the axis over whatever is drawn after the end (a failureFunction delivery) or before the start (clock skew)', () => {
    const t = buildTimeline(
      run({ status: 'failed', finishedAt: T0 + 100 }),
      [step({ startedAt: T0 - 20, finishedAt: T0 + 10, status: 'failed' })],
      [at(1, 400, 30, [])],
      T0 + 999,
    );
    expect([t.start - T0, t.end - T0]).toEqual([-20, 430]);
  });

  it('never draws a span ending before it starts (two runners, clocks apart)', () => {
    const row = buildTimeline(
      run(),
      [step({ status: 'succeeded', startedAt: T0 + 50, finishedAt: T0 + 40 })],
      [],
      T0 + 60,
    ).rows[1]!;
    expect(rel(row.spans)).toEqual([['executing', 50, 50, false]]);
  });
});

describe('geometry', () => {
  const axis = { start: 1000, end: 1200 };

  it('places times and spans as fractions of the axis, clamped', () => {
    expect(axisFraction(axis, 1050)).toBe(0.25);
    expect(axisFraction(axis, 0)).toBe(0);
    expect(axisFraction(axis, 9999)).toBe(1);
    expect(axisFraction({ start: 5, end: 5 }, 5)).toBe(0);
    expect(spanBox(axis, { start: 1050, end: 1100 })).toEqual({ left: 0.25, width: 0.25 });
  });

  it.each([
    [1000, 5, ['0', '200ms', '400ms', '600ms', '800ms', '1.00s']],
    [2600, 6, ['0', '500ms', '1.00s', '1.50s', '2.00s', '2.50s']],
    [95_000, 4, ['0', '30.00s', '1m00s', '1m30s']],
    [7, 10, ['0', '1.0ms', '2.0ms', '3.0ms', '4.0ms', '5.0ms', '6.0ms', '7.0ms']],
  ])('ticks a %i ms axis at round spacings (at most %i)', (span, max, labels) => {
    const ticks = axisTicks({ start: 0, end: span }, max);
    expect(ticks.map((t) => t.label)).toEqual(labels);
    expect(ticks.length).toBeLessThanOrEqual(max + 1);
    expect(ticks.every((t) => t.fraction >= 0 && t.fraction <= 1)).toBe(true);
  });

  it('ticks a week-long axis in days', () => {
    const ticks = axisTicks({ start: 0, end: 7 * 86_400_000 }, 3);
    expect(ticks.map((t) => t.label)).toEqual(['0', '3d00h', '6d00h']);
  });
});

describe('terminal cells', () => {
  const axis = { start: 0, end: 100 };
  const row = (
    spans: [Span['kind'], number, number][],
    failures: number[] = [],
  ): Pick<TimelineRow, 'spans' | 'failures'> => ({
    spans: spans.map(([kind, start, end]) => ({ kind, start, end, open: false, attemptSeq: null })),
    failures: failures.map((f) => ({ at: f, attemptSeq: null, message: '' })),
  });

  it('fills the cells each span covers, marks failures, leaves the rest blank', () => {
    const cells = barCells(
      axis,
      row(
        [
          ['executing', 0, 20],
          ['retry-wait', 20, 60],
          ['executing', 60, 80],
        ],
        [20, 80],
      ),
      10,
    );
    expect(cellsText(cells)).toBe('█✗╌╌╌╌█✗  ');
  });

  it('keeps a 1 ms execution visible inside a cell that is mostly waiting', () => {
    expect(
      cellsText(
        barCells(
          axis,
          row([
            ['retry-wait', 0, 55],
            ['executing', 55, 56],
            ['retry-wait', 56, 100],
          ]),
          10,
        ),
      ),
    ).toBe('╌╌╌╌╌█╌╌╌╌');
  });

  it('draws a span at the very end, and nothing for no width', () => {
    expect(cellsText(barCells(axis, row([['sleeping', 100, 100]]), 4))).toBe('   ░');
    expect(barCells(axis, row([['sleeping', 0, 100]]), 0)).toEqual([]);
  });
});

it('describes a span for tooltips and screen readers', () => {
  expect(describeSpan({ kind: 'executing', start: 0, end: 12, open: false, attemptSeq: 3 })).toBe(
    'executing 12ms (attempt 3)',
  );
  expect(describeSpan({ kind: 'waiting', start: 0, end: 1500, open: true, attemptSeq: null })).toBe(
    'waiting for an event 1.50s so far',
  );
});
