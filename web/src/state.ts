import { fillAttempt, fillRun, fillStep, type StreamEvent } from '../../api/events.js';
import type { Attempt, Run, RunPage, RunStatus, Step, StepLog } from '../../api/dto.js';
import { matchesRunFilter } from '../../api/run-query.js';
import { newerStep } from '../../view/progress.js';
import type { RunSearch } from './router.js';

/** A run opened in the dashboard: its steps by index and its attempts by seq, kept live by events. */
export interface RunDetail {
  steps: Record<number, Step>;
  attempts: Record<number, Attempt>;
  /** What the steps printed: not carried by events, read with each snapshot (again after a burst of the run's events). */
  logs: StepLog[];
  /** False until the first `GET /v1/runs/:id` answered (events may fill it before). */
  loaded: boolean;
}

/** The run list the page shows: one status filter and a search, newest first, paged with the API's cursor. */
export interface RunList {
  status: RunStatus | null;
  /** The search bar's filters the list was loaded with (`searchKey` tells two apart). */
  search: RunSearch;
  ids: string[];
  nextCursor: string | null;
  loaded: boolean;
}

export interface DashboardState {
  /** Every run seen, from lists, details and events. */
  runs: Record<string, Run>;
  list: RunList;
  details: Record<string, RunDetail>;
}

export const initialState: DashboardState = {
  runs: {},
  list: { status: null, search: {}, ids: [], nextCursor: null, loaded: false },
  details: {},
};

function newerRun(current: Run | undefined, incoming: Run): Run {
  return current && current.updatedAt > incoming.updatedAt ? current : incoming;
}

/** Run ids are time-sortable (ULID), so newest first is descending id order. */
function insertSorted(ids: string[], id: string): string[] {
  const at = ids.findIndex((other) => other < id);
  return at === -1 ? [...ids, id] : [...ids.slice(0, at), id, ...ids.slice(at)];
}

/** Keeps the list in step with a run that changed: added when it matches the filter, dropped when it stopped matching. */
function placeInList(list: RunList, run: Run): RunList {
  if (!list.loaded) return list;
  const present = list.ids.includes(run.id);
  // Undefined when the run alone cannot tell (a failed-step search): keep what the runner listed, add nothing.
  const matches = matchesRunFilter(run, { ...list.search, ...(list.status !== null && { status: list.status }) });
  if (present && matches === false) return { ...list, ids: list.ids.filter((id) => id !== run.id) };
  if (present || matches !== true) return list;
  // Older than the last loaded run while more pages exist: it belongs to a page not loaded yet.
  const last = list.ids[list.ids.length - 1];
  if (list.nextCursor !== null && last !== undefined && run.id < last) return list;
  return { ...list, ids: insertSorted(list.ids, run.id) };
}

function withRun(state: DashboardState, run: Run): DashboardState {
  const merged = newerRun(state.runs[run.id], run);
  return { ...state, runs: { ...state.runs, [run.id]: merged }, list: placeInList(state.list, merged) };
}

/**
 * Applies one live event from `GET /v1/events`. Steps and attempts are kept only for runs opened
 * in the page. A slim event keeps the bodies already held (the page reads the open run again).
 */
export function applyEvent(state: DashboardState, event: StreamEvent): DashboardState {
  if (event.type === 'run') return withRun(state, fillRun(state.runs[event.run.id], event.run));
  const runId = event.type === 'step' ? event.step.runId : event.attempt.runId;
  const detail = state.details[runId];
  if (!detail) return state;
  const next: RunDetail =
    event.type === 'step'
      ? {
          ...detail,
          steps: {
            ...detail.steps,
            [event.step.index]: newerStep(
              detail.steps[event.step.index],
              fillStep(detail.steps[event.step.index], event.step),
            ),
          },
        }
      : {
          ...detail,
          attempts: {
            ...detail.attempts,
            [event.attempt.seq]: fillAttempt(detail.attempts[event.attempt.seq], event.attempt),
          },
        };
  return { ...state, details: { ...state.details, [runId]: next } };
}

/** One text per search (field order fixed), to tell whether the list shown is the one asked for. */
export function searchKey(search: RunSearch): string {
  return JSON.stringify([
    search.idPrefix,
    search.url,
    search.urlPrefix,
    search.failedStep,
    search.createdAfter,
    search.createdBefore,
  ]);
}

/** A page of `GET /v1/runs`: replaces the list (a new filter, a reload) or appends to it (`more`). */
export function applyRunPage(
  state: DashboardState,
  status: RunStatus | null,
  page: RunPage,
  more = false,
  search: RunSearch = {},
): DashboardState {
  let runs = state.runs;
  for (const run of page.runs) runs = { ...runs, [run.id]: newerRun(runs[run.id], run) };
  const ids = page.runs.map((run) => run.id);
  const list: RunList = {
    status,
    search,
    ids: more ? [...state.list.ids, ...ids.filter((id) => !state.list.ids.includes(id))] : ids,
    nextCursor: page.nextCursor,
    loaded: true,
  };
  return { ...state, runs, list };
}

/** Marks a run as opened, so its step and attempt events are kept while its snapshot loads. */
export function openRun(state: DashboardState, runId: string): DashboardState {
  if (state.details[runId]) return state;
  return { ...state, details: { ...state.details, [runId]: { steps: {}, attempts: {}, logs: [], loaded: false } } };
}

/** The answer of `GET /v1/runs/:id`, merged with whatever events brought meanwhile. */
export function applyRunDetail(
  state: DashboardState,
  detail: { run: Run; steps: Step[]; attempts: Attempt[]; logs?: StepLog[] },
): DashboardState {
  const current = state.details[detail.run.id] ?? { steps: {}, attempts: {}, logs: [], loaded: false };
  const steps = { ...current.steps };
  for (const step of detail.steps) steps[step.index] = newerStep(steps[step.index], step);
  const attempts = { ...current.attempts };
  for (const attempt of detail.attempts) attempts[attempt.seq] = attempt;
  const next = withRun(state, detail.run);
  const logs = detail.logs ?? current.logs;
  return { ...next, details: { ...next.details, [detail.run.id]: { steps, attempts, logs, loaded: true } } };
}

/** Steps in order of position. */
export function stepsOf(detail: RunDetail | undefined): Step[] {
  return detail ? Object.values(detail.steps).sort((a, b) => a.index - b.index) : [];
}

/** Attempts in order, first first. */
export function attemptsOf(detail: RunDetail | undefined): Attempt[] {
  return detail ? Object.values(detail.attempts).sort((a, b) => a.seq - b.seq) : [];
}

/** Steps as the page lays them out: alone, or several started together (one `group`) side by side. */
export type StepBlock = { kind: 'single'; step: Step } | { kind: 'parallel'; group: number; steps: Step[] };

/** Groups steps that share a group number (a `Promise.all`); a group of one is a plain step. */
export function blocksOf(steps: readonly Step[]): StepBlock[] {
  const sizes = new Map<number, number>();
  for (const step of steps) if (step.group !== null) sizes.set(step.group, (sizes.get(step.group) ?? 0) + 1);
  const blocks: StepBlock[] = [];
  for (const step of steps) {
    const group = step.group;
    if (group === null || (sizes.get(group) ?? 0) < 2) {
      blocks.push({ kind: 'single', step });
      continue;
    }
    const last = blocks[blocks.length - 1];
    if (last?.kind === 'parallel' && last.group === group) last.steps.push(step);
    else blocks.push({ kind: 'parallel', group, steps: [step] });
  }
  return blocks;
}

export type Action =
  | { type: 'event'; event: StreamEvent }
  | { type: 'page'; status: RunStatus | null; search?: RunSearch; page: RunPage; more: boolean }
  | { type: 'open'; runId: string }
  | { type: 'detail'; detail: { run: Run; steps: Step[]; attempts: Attempt[]; logs?: StepLog[] } };

/** The page's one reducer: every change of what it shows goes through here. */
export function reduce(state: DashboardState, action: Action): DashboardState {
  switch (action.type) {
    case 'event':
      return applyEvent(state, action.event);
    case 'page':
      return applyRunPage(state, action.status, action.page, action.more, action.search);
    case 'open':
      return openRun(state, action.runId);
    case 'detail':
      return applyRunDetail(state, action.detail);
  }
}
