import { describe, expect, it } from 'vitest';
import { interpretKey } from '../../tui/hooks/use-keymap.js';
import { runRows, stepRows } from '../../tui/layout.js';
import { mergeIds, RunTable } from '../../tui/run-table.js';
import { detailLines, selectedRestartable, selectedRunId } from '../../tui/selectors.js';
import { NOT_RESTARTABLE } from '../../view/protocol.js';
import { initialState, reducer, type Action, type DashboardState } from '../../tui/state.js';
import { makeAttempt, makeRun, makeStep, runEvent, runId, T0 } from './fixtures.js';

const SIZE = { columns: 120, rows: 40 };
const apply = (state: DashboardState, ...actions: Action[]): DashboardState => actions.reduce(reducer, state);
const withRuns = (...ns: number[]): DashboardState =>
  apply(initialState(SIZE, T0), { type: 'runs-loaded', runs: ns.map((n) => makeRun(n)) });
const key = (k: Extract<Action, { type: 'key' }>['key']): Action => ({ type: 'key', key: k });

describe('keys on an Upstash-protocol run', () => {
  it('r and R say why instead of asking the runner; c still cancels', () => {
    const state = apply(initialState(SIZE, T0), {
      type: 'runs-loaded',
      runs: [makeRun(1, { protocol: 'upstash', status: 'failed' })],
    });
    expect(selectedRestartable(state)).toBe(false);
    expect(interpretKey(state, 'r', {})).toEqual({ type: 'notice', text: NOT_RESTARTABLE, error: true });
    expect(interpretKey(state, 'R', {})).toEqual({ type: 'notice', text: NOT_RESTARTABLE, error: true });
    expect(interpretKey(state, 'c', {})).toEqual({ effect: 'cancel', runId: runId(1) });
    expect(apply(state, interpretKey(state, 'r', {}) as Action).notice).toMatchObject({
      text: NOT_RESTARTABLE,
      error: true,
    });
    // A native run: the effects, as before.
    const native = withRuns(1);
    expect(selectedRestartable(native)).toBe(true);
    expect(interpretKey(native, 'r', {})).toEqual({ effect: 'rerun', runId: runId(1) });
    expect(interpretKey(native, 'R', {})).toEqual({ effect: 'resume', runId: runId(1) });
  });
});

describe('run list', () => {
  it('keeps runs newest first, whatever order they arrive in', () => {
    const state = apply(
      initialState(SIZE, T0),
      runEvent(makeRun(2)),
      runEvent(makeRun(5)),
      { type: 'runs-loaded', runs: [makeRun(1), makeRun(4)] },
      runEvent(makeRun(3)),
    );
    expect(state.order).toEqual([5, 4, 3, 2, 1].map(runId));
    expect(state.visible).toBe(state.order);
    expect(state.runs.size).toBe(5);
  });

  it('replaces a run with a newer version and ignores an older snapshot', () => {
    const running = makeRun(1, { status: 'running', updatedAt: T0 + 10, finishedAt: null });
    const done = makeRun(1, { status: 'completed', updatedAt: T0 + 20 });
    const state = apply(initialState(SIZE, T0), runEvent(running), runEvent(done), {
      type: 'runs-loaded',
      runs: [running],
    });
    expect(state.runs.get(runId(1))?.status).toBe('completed');
    expect(state.order).toEqual([runId(1)]);
    expect(state.runs.counts).toMatchObject({ completed: 1, running: 0 });
  });

  it('keeps the selected run selected when new runs arrive above it', () => {
    let state = apply(withRuns(1, 2, 3), key('down'));
    expect(selectedRunId(state)).toBe(runId(2));
    state = apply(state, runEvent(makeRun(4)), runEvent(makeRun(5)));
    expect(selectedRunId(state)).toBe(runId(2));
    expect(state.cursor).toBe(3);
    expect(state.top).toBe(0);
  });

  it('a cursor on the first row follows the newest run', () => {
    const state = apply(withRuns(1, 2), runEvent(makeRun(3)));
    expect([state.cursor, selectedRunId(state)]).toEqual([0, runId(3)]);
  });

  it('moves with the keys, clamped to the list, and pages by the rows on screen', () => {
    const many = Array.from({ length: 100 }, (_, i) => i + 1);
    let state = apply(withRuns(...many), key('up'));
    expect(state.cursor).toBe(0);
    state = apply(state, key('page-down'));
    expect(state.cursor).toBe(runRows(SIZE));
    expect(state.top).toBe(1);
    state = apply(state, key('end'));
    expect(state.cursor).toBe(99);
    expect(state.top).toBe(100 - runRows(SIZE));
    state = apply(state, key('home'));
    expect([state.cursor, state.top]).toEqual([0, 0]);
  });

  it('counts a step done at once, before the run event says so', () => {
    const state = apply(
      withRuns(1),
      runEvent(makeRun(1, { status: 'running', stepsDone: 0, finishedAt: null, updatedAt: T0 + 2000 })),
      {
        type: 'step',
        step: makeStep(1, 0),
      },
    );
    expect(state.runs.get(runId(1))?.stepsDone).toBe(1);
  });
});

describe('filter', () => {
  it('matches every word against id, workflow URL and status; esc clears it', () => {
    let state = apply(withRuns(1, 2, 3, 4), runEvent(makeRun(3, { status: 'failed', updatedAt: T0 + 9e6 })), {
      type: 'filter-open',
    });
    expect(state.filtering).toBe(true);
    state = apply(state, { type: 'filter-change', text: 'fail' });
    expect(state.visible).toEqual([runId(3)]);
    state = apply(state, { type: 'filter-change', text: 'workflow-1 completed' });
    expect(state.visible).toEqual([runId(4), runId(1)]);
    state = apply(state, { type: 'filter-close' });
    expect([state.filtering, state.filter]).toEqual([false, 'workflow-1 completed']);
    state = apply(state, key('back'));
    expect(state.filter).toBe('');
    expect(state.visible).toBe(state.order);
  });

  it('lets live runs in and out as their status changes', () => {
    let state = apply(withRuns(1), { type: 'filter-change', text: 'running' });
    expect(state.visible).toEqual([]);
    state = apply(
      state,
      runEvent(makeRun(2, { status: 'running', finishedAt: null })),
      runEvent(makeRun(3, { status: 'running', finishedAt: null })),
    );
    expect(state.visible).toEqual([runId(3), runId(2)]);
    state = apply(state, runEvent(makeRun(3, { status: 'completed', updatedAt: T0 + 9e6 })));
    expect(state.visible).toEqual([runId(2)]);
    expect(state.order).toHaveLength(3);
  });

  it('types into the prompt through the keymap, one press at a time', () => {
    let state = withRuns(11, 12);
    for (const ch of ['/', '1', '2']) state = apply(state, interpretKey(state, ch, {}) as Action);
    expect(state.filter).toBe('12');
    expect(state.visible).toEqual([runId(12)]);
    state = apply(state, interpretKey(state, '', { backspace: true }) as Action);
    expect(state.filter).toBe('1');
    expect(interpretKey(state, 'q', {})).toEqual({ type: 'filter-change', text: '1q' });
    state = apply(state, interpretKey(state, '', { escape: true }) as Action);
    expect([state.filtering, state.filter]).toEqual([false, '']);
    expect(interpretKey(state, 'q', {})).toEqual({ effect: 'quit' });
    expect(interpretKey(state, 'c', {})).toEqual({ effect: 'cancel', runId: runId(12) });
  });
});

describe('run and step views', () => {
  const steps = [
    makeStep(1, 0),
    makeStep(1, 1, { status: 'running', finishedAt: null, durationMs: null, outputEncoded: null }),
  ];
  const opened = (): DashboardState => apply(withRuns(1, 2), key('down'), key('enter'));

  it('enter opens the selected run (loading), and its detail arrives', () => {
    let state = opened();
    expect(state.view).toBe('run');
    expect(state.detail).toMatchObject({ runId: runId(1), loading: true });
    expect(selectedRunId(state)).toBe(runId(1));
    state = apply(state, { type: 'detail-loaded', run: makeRun(1), steps, attempts: [makeAttempt(1, 1)] });
    expect(state.detail).toMatchObject({ loading: false, steps, attempts: [makeAttempt(1, 1)] });
  });

  it('keeps a step event that came while loading when the snapshot is older', () => {
    const done = {
      ...steps[1]!,
      status: 'succeeded' as const,
      finishedAt: T0 + 30,
      durationMs: 2,
      outputEncoded: '[1]',
    };
    let state = apply(opened(), { type: 'step', step: done }, { type: 'attempt', attempt: makeAttempt(1, 2) });
    state = apply(state, { type: 'detail-loaded', run: makeRun(1), steps, attempts: [makeAttempt(1, 1)] });
    expect(state.detail?.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded']);
    expect(state.detail?.attempts.map((a) => a.seq)).toEqual([1, 2]);
  });

  it('follows live steps and attempts of the open run only', () => {
    let state = apply(opened(), { type: 'detail-loaded', run: makeRun(1), steps, attempts: [] });
    state = apply(
      state,
      { type: 'step', step: makeStep(2, 0) },
      { type: 'step', step: makeStep(1, 2) },
      { type: 'attempt', attempt: makeAttempt(1, 1) },
    );
    expect(state.detail?.steps.map((s) => s.index)).toEqual([0, 1, 2]);
    expect(state.detail?.attempts).toHaveLength(1);
  });

  it('moves between steps, opens one, scrolls it within its lines, and goes back', () => {
    const many = Array.from({ length: 60 }, (_, i) => makeStep(1, i));
    let state = apply(
      opened(),
      { type: 'detail-loaded', run: makeRun(1), steps: many, attempts: [makeAttempt(1, 1)] },
      key('end'),
    );
    expect(state.stepCursor).toBe(59);
    expect(state.stepTop).toBe(60 - stepRows(SIZE));
    state = apply(state, key('home'), key('enter'));
    expect(state.view).toBe('step');
    state = apply(state, key('end'));
    const lines = detailLines(state).length;
    expect(state.scroll).toBe(Math.max(0, lines - (SIZE.rows - 4)));
    state = apply(state, key('back'));
    expect(state.view).toBe('run');
    state = apply(state, key('back'));
    expect([state.view, state.detail]).toEqual(['runs', null]);
  });

  it('a failed load shows its message; `/` from a run goes back to the list with the prompt open', () => {
    let state = apply(opened(), { type: 'detail-failed', runId: runId(1), message: 'No run with id x.' });
    expect(state.detail).toMatchObject({ loading: false, error: 'No run with id x.' });
    state = apply(state, { type: 'filter-open' });
    expect([state.view, state.filtering, state.detail]).toEqual(['runs', true, null]);
  });
});

describe('resize, ticks, notices, connection', () => {
  it('a smaller terminal keeps the cursor on screen', () => {
    let state = apply(withRuns(...Array.from({ length: 50 }, (_, i) => i)), key('end'));
    state = apply(state, { type: 'resize', columns: 60, rows: 10 });
    expect(state.size).toEqual({ columns: 60, rows: 10 });
    expect(state.cursor - state.top).toBeLessThan(runRows(state.size));
    expect(state.top).toBe(50 - runRows(state.size));
  });

  it('a notice goes away a few seconds after it was shown', () => {
    let state = apply(
      initialState(SIZE, T0),
      { type: 'notice', text: 'cancelled x' },
      { type: 'tick', now: T0 + 1000 },
    );
    expect(state.notice?.text).toBe('cancelled x');
    state = apply(state, { type: 'tick', now: T0 + 10_000 });
    expect(state.notice).toBeNull();
    expect(apply(state, { type: 'connection', status: 'live' }).connection).toBe('live');
  });
});

describe('10,000 runs', () => {
  it('applies 10,000 run events one by one, newest first, and keeps the table consistent', () => {
    const started = performance.now();
    let state = initialState(SIZE, T0);
    // Arrival order is scrambled so inserts land in the middle too, not only on top.
    for (let i = 0; i < 10_000; i++) state = reducer(state, runEvent(makeRun((i * 7919) % 10_000)));
    const elapsed = performance.now() - started;
    console.log(`[tui] 10,000 run events through the reducer: ${elapsed.toFixed(0)} ms`);
    expect(state.runs.size).toBe(10_000);
    expect(state.order[0]).toBe(runId(9999));
    expect(state.order.at(-1)).toBe(runId(0));
    expect(state.order.every((id, i) => i === 0 || state.order[i - 1]! > id)).toBe(true);
    expect(state.runs.counts.completed).toBe(10_000);
  });
});

describe('run table helpers', () => {
  it('merges and removes ids in one pass, without duplicates', () => {
    expect(mergeIds(['e', 'c', 'a'], ['d', 'b', 'c', 'f'])).toEqual(['f', 'e', 'd', 'c', 'b', 'a']);
    expect(mergeIds(['e', 'c', 'a'], ['d'], new Set(['c']))).toEqual(['e', 'd', 'a']);
    const table = RunTable.empty.with([makeRun(1), makeRun(2, { status: 'failed' })]);
    expect(RunTable.empty.size).toBe(0);
    expect([table.size, table.counts.failed, table.get(runId(2))?.status]).toEqual([2, 1, 'failed']);
  });
});
