import { fillAttempt, fillRun, fillStep, type StreamEvent } from '../api/events.js';
import type { Attempt, Run, Step, StepLog } from '../api/dto.js';
import { newerStep } from '../view/progress.js';
import type { Connection, DashboardState } from './dashboard-state.js';
import { detailRows, follow, runRows, stepRows, viewSize, type Size } from './layout.js';
import type { LogEntry } from './log-feed.js';
import { mergeIds, positionOf, RunTable } from './run-table.js';
import { detailLines } from './selectors.js';
import { searchMatcher } from './search.js';

/*
 * The dashboard's whole state and its pure reducer: `(state, action) => state`, where actions
 * are runner events (single or batched), loaded history and details, keys, the filter, resizes
 * and clock ticks. Components only read it; hooks only dispatch. Runs live in a `RunTable`
 * (sharded immutable maps) plus an id array kept newest first, so an event costs microseconds
 * with 10,000 runs and views draw only the rows on screen. The log pane's lines (the app `wf dev`
 * started, and what `wf dev` found) arrive as actions too, into a buffer capped at `LOG_LINES`.
 */

export type { Size } from './layout.js';
export type { Connection, DashboardState, Detail, LogState, View } from './dashboard-state.js';

/** Lines the log pane keeps; older ones are dropped (the pane shows the newest). */
export const LOG_LINES = 200;

export type KeyAction = 'up' | 'down' | 'page-up' | 'page-down' | 'home' | 'end' | 'enter' | 'back';

export type Action =
  | StreamEvent
  | { type: 'events'; events: readonly StreamEvent[] }
  | { type: 'runs-loaded'; runs: readonly Run[] }
  | { type: 'search-loaded'; text: string; runs: readonly Run[] }
  | { type: 'detail-loaded'; run: Run; steps: readonly Step[]; attempts: readonly Attempt[]; logs?: readonly StepLog[] }
  | { type: 'detail-failed'; runId: string; message: string }
  | { type: 'key'; key: KeyAction }
  | { type: 'filter-open' }
  | { type: 'filter-change'; text: string }
  | { type: 'filter-close' }
  | { type: 'filter-clear' }
  | { type: 'resize'; columns: number; rows: number }
  | { type: 'tick'; now: number }
  | { type: 'connection'; status: Connection }
  | { type: 'notice'; text: string; error?: boolean }
  | { type: 'log'; entries: readonly LogEntry[] }
  | { type: 'log-toggle' };

const NOTICE_MS = 6000;

/** `withLog`: the dashboard has a log (of the app `wf dev` runs); its pane starts open. */
export function initialState(size: Size, now: number, withLog = false): DashboardState {
  const order: readonly string[] = [];
  return {
    runs: RunTable.empty,
    order,
    visible: order,
    filter: '',
    found: null,
    filtering: false,
    view: 'runs',
    cursor: 0,
    top: 0,
    detail: null,
    stepCursor: 0,
    stepTop: 0,
    scroll: 0,
    size,
    now,
    connection: 'connecting',
    notice: null,
    log: { enabled: withLog, open: withLog, lines: [], total: 0 },
  };
}

/** The size the views page by: the terminal less the open log pane. */
export function bodySize(state: DashboardState): Size {
  return viewSize(state.size, state.log.open);
}

/** New log lines in; what `wf dev` itself says (a probe result, the tunnel) is also the notice. */
function appendLog(state: DashboardState, entries: readonly LogEntry[]): DashboardState {
  if (entries.length === 0) return state;
  const joined =
    state.log.lines.length + entries.length > LOG_LINES
      ? [...state.log.lines, ...entries].slice(-LOG_LINES)
      : [...state.log.lines, ...entries];
  const said = entries.findLast((entry) => entry.source === 'wf');
  const notice = said ? { text: said.text, error: (said.level ?? 'info') !== 'info', at: state.now } : state.notice;
  return { ...state, notice, log: { ...state.log, lines: joined, total: state.log.total + entries.length } };
}

/**
 * Puts runs in. A cursor on the first row stays there and so follows the newest run; anywhere
 * else the selected run stays selected (and the rows on screen stay put unless at the top).
 */
function upsertRuns(state: DashboardState, incoming: readonly Run[]): DashboardState {
  const accepted = incoming.filter((run) => (state.runs.get(run.id)?.updatedAt ?? -Infinity) <= run.updatedAt);
  if (accepted.length === 0) return state;
  const runs = state.runs.with(accepted);
  const order = mergeIds(
    state.order,
    accepted.filter((run) => !state.runs.get(run.id)).map((run) => run.id),
  );
  let visible = order;
  if (state.filter !== '') {
    const test = searchMatcher(state.filter, state.now, foundFor(state, state.filter));
    const remove = new Set(accepted.filter((run) => !test(run)).map((run) => run.id));
    visible = mergeIds(
      state.visible,
      accepted.filter((run) => !remove.has(run.id)).map((run) => run.id),
      remove,
    );
  }
  const selected = state.visible[state.cursor];
  const cursor =
    selected === undefined || state.cursor === 0
      ? 0
      : Math.min(positionOf(visible, selected).index, Math.max(0, visible.length - 1));
  const top = state.top === 0 ? 0 : state.top + cursor - state.cursor;
  return { ...state, runs, order, visible, cursor, top: follow(top, cursor, visible.length, runRows(bodySize(state))) };
}

function upsertBy<T>(
  list: readonly T[],
  item: T,
  key: (t: T) => number,
  keep?: (old: T, next: T) => boolean,
): readonly T[] {
  const index = list.findIndex((t) => key(t) >= key(item));
  if (index === -1) return [...list, item];
  if (key(list[index]!) !== key(item)) return list.toSpliced(index, 0, item);
  return keep?.(list[index]!, item) ? list : list.with(index, item);
}

/** A snapshot or a late event never replaces a copy of the step that is further along (view/progress.ts). */
const olderThanHeld = (held: Step, next: Step): boolean => newerStep(held, next) === held;
const stepKey = (s: Step): number => s.index;
const attemptKey = (a: Attempt): number => a.seq;

/** Slim events (see api/events.ts) keep the bodies already held; the open run is read again for new ones. */
function applyEvents(state: DashboardState, events: readonly StreamEvent[]): DashboardState {
  const changed = new Map<string, Run>();
  let detail = state.detail;
  for (const event of events) {
    if (event.type === 'run') {
      changed.set(event.run.id, fillRun(changed.get(event.run.id) ?? state.runs.get(event.run.id), event.run));
      continue;
    }
    if (event.type === 'step') {
      // Run events come at the run's own changes; count a step done here to stay live between them.
      const run = changed.get(event.step.runId) ?? state.runs.get(event.step.runId);
      if (run && event.step.status === 'succeeded' && run.stepsDone <= event.step.index)
        changed.set(run.id, { ...run, stepsDone: event.step.index + 1 });
      if (detail?.runId === event.step.runId) {
        const step = fillStep(
          detail.steps.find((s) => s.index === event.step.index),
          event.step,
        );
        detail = { ...detail, steps: upsertBy(detail.steps, step, stepKey, olderThanHeld) };
      }
    } else if (detail?.runId === event.attempt.runId) {
      const attempt = fillAttempt(
        detail.attempts.find((a) => a.seq === event.attempt.seq),
        event.attempt,
      );
      detail = { ...detail, attempts: upsertBy(detail.attempts, attempt, attemptKey) };
    }
  }
  return upsertRuns(detail === state.detail ? state : { ...state, detail }, [...changed.values()]);
}

/** The runner's answer for this text, if it is the one held. */
function foundFor(state: DashboardState, text: string): ReadonlySet<string> | undefined {
  return state.found?.text === text ? state.found.ids : undefined;
}

function withFilter(state: DashboardState, filter: string): DashboardState {
  const test = searchMatcher(filter, state.now, foundFor(state, filter));
  const visible = filter === '' ? state.order : state.order.filter((id) => test(state.runs.get(id)!));
  return { ...state, filter, visible, cursor: 0, top: 0 };
}

/** The runner's answer to the filter's terms: its runs join the table, and the list is drawn again by them. */
function searchLoaded(state: DashboardState, text: string, runs: readonly Run[]): DashboardState {
  if (text !== state.filter) return state; // the text changed meanwhile: a newer search is on its way
  const found = { text, ids: new Set(runs.map((run) => run.id)) };
  const withRuns = upsertRuns({ ...state, found }, runs);
  const test = searchMatcher(text, state.now, found.ids);
  const visible = withRuns.order.filter((id) => test(withRuns.runs.get(id)!));
  return clamp({ ...withRuns, visible, cursor: Math.min(withRuns.cursor, Math.max(0, visible.length - 1)) });
}

function move(cursor: number, key: KeyAction, count: number, page: number): number {
  const targets: Partial<Record<KeyAction, number>> = {
    up: cursor - 1,
    down: cursor + 1,
    'page-up': cursor - page,
    'page-down': cursor + page,
    home: 0,
    end: count - 1,
  };
  return Math.max(0, Math.min(targets[key] ?? cursor, count - 1));
}

function onKey(state: DashboardState, key: KeyAction): DashboardState {
  const { detail } = state;
  const size = bodySize(state);
  if (state.view === 'runs') {
    if (key === 'back') return state.filter === '' ? state : withFilter(state, '');
    const id = state.visible[state.cursor];
    if (key === 'enter') {
      if (id === undefined) return state;
      return {
        ...state,
        view: 'run',
        detail: { runId: id, loading: true, error: null, steps: [], attempts: [], logs: [] },
        stepCursor: 0,
        stepTop: 0,
        filtering: false,
      };
    }
    const cursor = move(state.cursor, key, state.visible.length, runRows(size));
    return { ...state, cursor, top: follow(state.top, cursor, state.visible.length, runRows(size)) };
  }
  if (state.view === 'run') {
    if (key === 'back') return { ...state, view: 'runs', detail: null };
    const count = detail?.steps.length ?? 0;
    if (key === 'enter') return count === 0 ? state : { ...state, view: 'step', scroll: 0 };
    const stepCursor = move(state.stepCursor, key, count, stepRows(size));
    return { ...state, stepCursor, stepTop: follow(state.stepTop, stepCursor, count, stepRows(size)) };
  }
  if (key === 'back') return { ...state, view: 'run' };
  if (key === 'enter') return state;
  const height = detailRows(size);
  const last = Math.max(0, detailLines(state).length - height);
  const scroll = move(state.scroll, key, last + 1, height);
  return scroll === state.scroll ? state : { ...state, scroll };
}

/** Keeps every cursor and scroll position inside what there is to show (after a resize or a load). */
function clamp(state: DashboardState): DashboardState {
  const count = state.detail?.steps.length ?? 0;
  const stepCursor = Math.max(0, Math.min(state.stepCursor, count - 1));
  const size = bodySize(state);
  const maxScroll = state.view === 'step' ? Math.max(0, detailLines(state).length - detailRows(size)) : 0;
  return {
    ...state,
    top: follow(state.top, state.cursor, state.visible.length, runRows(size)),
    stepCursor,
    stepTop: follow(state.stepTop, stepCursor, count, stepRows(size)),
    scroll: Math.min(state.scroll, maxScroll),
  };
}

export function reducer(state: DashboardState, action: Action): DashboardState {
  switch (action.type) {
    case 'run':
    case 'step':
    case 'attempt':
      return applyEvents(state, [action]);
    case 'events':
      return applyEvents(state, action.events);
    case 'runs-loaded':
      return upsertRuns(state, action.runs);
    case 'search-loaded':
      return searchLoaded(state, action.text, action.runs);
    case 'detail-loaded': {
      const detail = state.detail;
      if (detail?.runId !== action.run.id) return upsertRuns(state, [action.run]);
      // Events that came in while loading may be newer than the snapshot: the later of each wins.
      let steps = detail.steps;
      for (const step of action.steps) steps = upsertBy(steps, step, stepKey, olderThanHeld);
      let attempts = detail.attempts;
      // An attempt never changes once logged, and the snapshot's copy has the bodies a slim event left out.
      for (const attempt of action.attempts) attempts = upsertBy(attempts, attempt, attemptKey);
      // Logs come only with a snapshot, which is read again after each burst of the run's events.
      const logs = action.logs ?? detail.logs;
      return clamp(
        upsertRuns({ ...state, detail: { ...detail, loading: false, error: null, steps, attempts, logs } }, [
          action.run,
        ]),
      );
    }
    case 'detail-failed':
      return state.detail?.runId === action.runId
        ? { ...state, detail: { ...state.detail, loading: false, error: action.message } }
        : state;
    case 'key':
      return onKey(state, action.key);
    case 'filter-open':
      return { ...state, view: 'runs', detail: null, filtering: true };
    case 'filter-change':
      return withFilter(state, action.text);
    case 'filter-close':
      return { ...state, filtering: false };
    case 'filter-clear':
      return { ...withFilter(state, ''), filtering: false };
    case 'resize':
      return clamp({ ...state, size: { columns: action.columns, rows: action.rows } });
    case 'tick':
      return {
        ...state,
        now: action.now,
        notice: state.notice && action.now - state.notice.at > NOTICE_MS ? null : state.notice,
      };
    case 'connection':
      return state.connection === action.status ? state : { ...state, connection: action.status };
    case 'notice':
      return { ...state, notice: { text: action.text, error: action.error ?? false, at: state.now } };
    case 'log':
      return appendLog(state, action.entries);
    case 'log-toggle':
      return state.log.enabled ? clamp({ ...state, log: { ...state.log, open: !state.log.open } }) : state;
  }
}
