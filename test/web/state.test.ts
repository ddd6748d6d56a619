import { describe, expect, it } from 'vitest';
import type { Attempt, Run, Step } from '../../api/dto.js';
import { prettyBody } from '../../web/src/format.js';
import { parseRoute, paths } from '../../web/src/router.js';
import {
  applyEvent,
  applyRunDetail,
  applyRunPage,
  blocksOf,
  initialState,
  openRun,
  searchKey,
  stepsOf,
  type DashboardState,
} from '../../web/src/state.js';

/** The dashboard's pure parts (web/src/state.ts, format.ts, router.ts), without a browser. */

const T = 1_700_000_000_000;
const id = (n: number): string => `wfr_01JD3W6J8Q7ZC0M5V4XK2N9T${String(n).padStart(2, '0')}`;

function run(n: number, patch: Partial<Run> = {}): Run {
  return {
    id: id(n),
    url: 'http://127.0.0.1:3000/workflow',
    status: 'running',
    body: '{}',
    headers: {},
    createdAt: T + n,
    updatedAt: T + n,
    finishedAt: null,
    nextAt: null,
    failures: 0,
    retries: 3,
    retryDelayMs: 1000,
    stepsDone: 0,
    attempts: 0,
    outputEncoded: null,
    error: null,
    idempotencyKey: null,
    unreachableSince: null,
    failureCall: null,
    failureCallAttempts: 0,
    ...patch,
  };
}

function step(index: number, patch: Partial<Step> = {}): Step {
  return {
    runId: id(1),
    index,
    name: `step-${index}`,
    kind: 'run',
    status: 'running',
    outputEncoded: null,
    error: null,
    startedAt: T,
    finishedAt: null,
    durationMs: null,
    reportedExecutions: 1,
    failures: 0,
    group: index + 1,
    until: null,
    eventId: null,
    request: null,
    ...patch,
  };
}

function attempt(seq: number, lines: unknown[]): Attempt {
  return {
    runId: id(1),
    seq,
    startedAt: T,
    durationMs: 5,
    requestUrl: 'http://127.0.0.1:3000/workflow',
    requestHeaders: {},
    requestBody: '{}',
    responseStatus: 200,
    responseHeaders: {},
    responseBody: lines.map((l) => JSON.stringify(l)).join('\n'),
    outcome: 'done',
    error: null,
  };
}

const listed = (state: DashboardState): string[] => state.list.ids;

describe('web state: the run list', () => {
  it('puts a new run first, live, when it matches the filter', () => {
    let state = applyRunPage(initialState, null, { runs: [run(2), run(1)], nextCursor: null });
    state = applyEvent(state, { type: 'run', run: run(3) });
    expect(listed(state)).toEqual([id(3), id(2), id(1)]);
    let failed = applyRunPage(initialState, 'failed', { runs: [], nextCursor: null });
    failed = applyEvent(failed, { type: 'run', run: run(3) });
    expect(listed(failed)).toEqual([]);
    failed = applyEvent(failed, { type: 'run', run: run(3, { status: 'failed', updatedAt: T + 10 }) });
    expect(listed(failed)).toEqual([id(3)]);
  });

  it('drops a run that stops matching the filter, and leaves runs of unloaded pages alone', () => {
    let state = applyRunPage(initialState, 'running', { runs: [run(5), run(4)], nextCursor: id(4) });
    state = applyEvent(state, { type: 'run', run: run(5, { status: 'completed', updatedAt: T + 50 }) });
    expect(listed(state)).toEqual([id(4)]);
    state = applyEvent(state, { type: 'run', run: run(1) }); // older than the last loaded run: on a later page
    expect(listed(state)).toEqual([id(4)]);
    state = applyRunPage(state, 'running', { runs: [run(2)], nextCursor: null }, true);
    expect(listed(state)).toEqual([id(4), id(2)]);
  });

  it('places live runs by the search too: a URL prefix decides, a failed-step search adds nothing it cannot check', () => {
    let state = applyRunPage(initialState, null, { runs: [run(1)], nextCursor: null }, false, {
      urlPrefix: 'http://127.0.0.1:3000/',
    });
    state = applyEvent(state, { type: 'run', run: run(2) });
    state = applyEvent(state, { type: 'run', run: run(3, { url: 'http://127.0.0.1:4000/workflow' }) });
    expect(listed(state)).toEqual([id(2), id(1)]);
    let failedStep = applyRunPage(
      initialState,
      'failed',
      { runs: [run(1, { status: 'failed' })], nextCursor: null },
      false,
      { failedStep: 'charge' },
    );
    failedStep = applyEvent(failedStep, { type: 'run', run: run(2, { status: 'failed' }) });
    expect(listed(failedStep)).toEqual([id(1)]);
    failedStep = applyEvent(failedStep, { type: 'run', run: run(1, { status: 'queued', updatedAt: T + 10 }) }); // resumed: no longer failed
    expect(listed(failedStep)).toEqual([]);
    expect(searchKey({ failedStep: 'charge' })).not.toBe(searchKey({ idPrefix: 'charge' }));
  });

  it('keeps the newer copy of a run when an older one arrives late', () => {
    let state = applyEvent(initialState, { type: 'run', run: run(1, { status: 'completed', updatedAt: T + 100 }) });
    state = applyRunPage(state, null, { runs: [run(1, { status: 'running', updatedAt: T + 50 })], nextCursor: null });
    expect(state.runs[id(1)]!.status).toBe('completed');
  });
});

describe('web state: an opened run', () => {
  it('keeps step and attempt events only for runs opened in the page', () => {
    const before = applyEvent(initialState, { type: 'step', step: step(0) });
    expect(before.details).toEqual({});
    let state = openRun(initialState, id(1));
    state = applyEvent(state, { type: 'step', step: step(0) });
    state = applyEvent(state, { type: 'attempt', attempt: attempt(1, []) });
    expect(stepsOf(state.details[id(1)])).toHaveLength(1);
    expect(state.details[id(1)]!.loaded).toBe(false);
    expect(Object.keys(state.details[id(1)]!.attempts)).toEqual(['1']);
  });

  it('merges the snapshot with events either side of it, the furthest step state winning', () => {
    const succeeded = step(0, { status: 'succeeded', finishedAt: T + 5, durationMs: 5, outputEncoded: '["x"]' });
    let state = openRun(initialState, id(1));
    state = applyEvent(state, { type: 'step', step: succeeded });
    // The snapshot was read before the step finished: it must not take the step back.
    state = applyRunDetail(state, { run: run(1), steps: [step(0), step(1)], attempts: [] });
    expect(stepsOf(state.details[id(1)]).map((s) => s.status)).toEqual(['succeeded', 'running']);
    expect(state.details[id(1)]!.loaded).toBe(true);
    // A retry: failed (retrying), then executing again; a late copy of the failure is ignored.
    const retrying = step(1, { status: 'retrying', failures: 1, finishedAt: T + 9 });
    const again = step(1, { status: 'running', failures: 1, reportedExecutions: 2 });
    state = applyEvent(applyEvent(state, { type: 'step', step: retrying }), { type: 'step', step: again });
    state = applyEvent(state, { type: 'step', step: retrying });
    expect(state.details[id(1)]!.steps[1]!.reportedExecutions).toBe(2);
    expect(state.details[id(1)]!.steps[1]!.status).toBe('running');
  });

  it('groups steps started together (one group number) and leaves single ones alone', () => {
    const steps = [step(0, { group: 1 }), step(1, { group: 2 }), step(2, { group: 2 }), step(3, { group: 3 })];
    expect(blocksOf(steps).map((b) => (b.kind === 'single' ? b.step.index : b.steps.map((s) => s.index)))).toEqual([
      0,
      [1, 2],
      3,
    ]);
  });
});

describe('web format', () => {
  it('pretty-prints JSON bodies and leaves anything else as it is', () => {
    expect(prettyBody('{"a":[1]}')).toBe('{\n  "a": [\n    1\n  ]\n}');
    expect(prettyBody('<b>not json</b>')).toBe('<b>not json</b>');
    expect(prettyBody('{broken')).toBe('{broken');
  });
});

describe('web routes', () => {
  it('parses every route, deep links included, and builds only internal paths', () => {
    expect(parseRoute('/', '')).toEqual({ page: 'runs', status: null });
    expect(parseRoute('/runs', '?status=failed')).toEqual({ page: 'runs', status: 'failed' });
    expect(parseRoute('/runs', '?status=bogus')).toEqual({ page: 'runs', status: null });
    expect(parseRoute(paths.run(id(1)), '')).toEqual({ page: 'run', runId: id(1) });
    expect(parseRoute(paths.step(id(1), 3), '')).toEqual({ page: 'run', runId: id(1), step: 3 });
    expect(parseRoute(paths.attempt(id(1), 2), '')).toEqual({ page: 'run', runId: id(1), attempt: 2 });
    expect(parseRoute('/runs/a/b/c', '')).toEqual({ page: 'not-found', path: '/runs/a/b/c' });
    expect(paths.run('javascript:alert(1)')).toBe('/runs/javascript%3Aalert(1)');
  });

  it('keeps the search in the address: parsed back as built, bad times dropped', () => {
    const search = {
      idPrefix: 'wfr_01',
      urlPrefix: 'https://app/api/',
      failedStep: 'charge',
      createdAfter: T,
      createdBefore: T + 60_000,
    };
    const path = paths.runs('failed', search);
    const url = new URL(path, 'http://runner');
    expect(parseRoute(url.pathname, url.search)).toEqual({ page: 'runs', status: 'failed', search });
    expect(paths.runs(null, {})).toBe('/');
    expect(parseRoute('/runs', '?createdAfter=2026-01-31T12:00:00Z&createdBefore=soon&url=')).toEqual({
      page: 'runs',
      status: null,
      search: { createdAfter: Date.parse('2026-01-31T12:00:00Z') },
    });
  });
});
