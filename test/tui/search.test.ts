import { describe, expect, it } from 'vitest';
import { parseSearch, searchMatcher } from '../../tui/search.js';
import { initialState, reducer, type Action, type DashboardState } from '../../tui/state.js';
import { makeRun, runEvent, runId, T0 } from './fixtures.js';

/** The `/` prompt as a search: its terms (tui/search.ts) and the runner's answer in the reducer. */

const SIZE = { columns: 120, rows: 40 };
const apply = (state: DashboardState, ...actions: Action[]): DashboardState => actions.reduce(reducer, state);

describe('the / prompt text', () => {
  it('reads key:value terms as the runner search and the rest as words', () => {
    expect(parseSearch('status:failed,cancelled url:https://app/api/ step:charge id:wfr_01 Pay', T0)).toEqual({
      filter: {
        status: ['failed', 'cancelled'],
        urlPrefix: 'https://app/api/',
        failedStep: 'charge',
        idPrefix: 'wfr_01',
      },
      words: ['pay'],
    });
    expect(parseSearch('since:2h until:2026-01-02T03:00:00Z', T0).filter).toEqual({
      createdAfter: T0 - 7_200_000,
      createdBefore: Date.parse('2026-01-02T03:00:00Z'),
    });
    // A URL typed as a word is a word: only our keys make terms.
    expect(parseSearch('http://localhost:3000', T0)).toEqual({ filter: {}, words: ['http://localhost:3000'] });
  });

  it('says what is wrong with a term and leaves it out', () => {
    expect(parseSearch('status:done', T0)).toMatchObject({
      filter: {},
      error: expect.stringContaining('Unknown status "done"'),
    });
    expect(parseSearch('since:yesterday', T0)).toMatchObject({
      filter: {},
      error: 'Expected since: to be a duration ago like 2h or a date like 2026-01-31T12:00, got "yesterday".',
    });
  });

  it('matches runs by terms and words; a failed-step term only through what the runner found', () => {
    const failed = makeRun(1, { status: 'failed' });
    expect(searchMatcher('status:failed workflow-1', T0)(failed)).toBe(true);
    expect(searchMatcher('status:completed', T0)(failed)).toBe(false);
    expect(searchMatcher('url:http://localhost:3000/api/workflow-2', T0)(failed)).toBe(false);
    expect(searchMatcher('step:charge', T0)(failed)).toBe(false);
    expect(searchMatcher('step:charge', T0, new Set([failed.id]))(failed)).toBe(true);
  });
});

describe('the runner answers a search', () => {
  it('shows what it found, older runs included, and keeps live runs it cannot judge out', () => {
    let state = apply(initialState(SIZE, T0), {
      type: 'runs-loaded',
      runs: [makeRun(5), makeRun(6, { status: 'failed' })],
    });
    state = apply(
      state,
      { type: 'filter-open' },
      { type: 'filter-change', text: 'step:charge' },
      { type: 'filter-close' },
    );
    expect(state.visible).toEqual([]); // nothing known until the runner answers
    const old = makeRun(1, { status: 'failed' });
    state = apply(state, { type: 'search-loaded', text: 'step:charge', runs: [old, makeRun(6, { status: 'failed' })] });
    expect(state.visible).toEqual([runId(6), runId(1)]);
    expect(state.order).toEqual([6, 5, 1].map(runId));
    state = apply(state, runEvent(makeRun(7, { status: 'failed' })));
    expect(state.visible).toEqual([runId(6), runId(1)]);
    // An answer for a text no longer in the prompt changes nothing.
    state = apply(
      state,
      { type: 'filter-change', text: 'status:failed' },
      { type: 'search-loaded', text: 'step:charge', runs: [makeRun(2)] },
    );
    expect(state.order).not.toContain(runId(2));
    expect(state.visible).toEqual([7, 6, 1].map(runId));
  });
});
