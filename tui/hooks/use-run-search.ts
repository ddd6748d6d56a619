import { useEffect, type Dispatch } from 'react';
import { errorMessage, type DataSource } from '../data-source.js';
import { asksRunner, parseSearch } from '../search.js';
import type { Action } from '../state.js';

/** Runs one search answers at most: the API's largest page. */
const SEARCH_LIMIT = 500;

/**
 * When the `/` prompt closes on a text with `key:value` terms (tui/search.ts), asks the runner for
 * the runs they match (on its indexes, older history included) and hands them to the reducer; a
 * term it cannot read, or a refusal, is the status line's notice. Typing asks nothing: one search
 * per enter.
 */
export function useRunSearch(
  source: DataSource,
  dispatch: Dispatch<Action>,
  text: string,
  typing: boolean,
  now: () => number,
): void {
  useEffect(() => {
    if (typing || text === '') return;
    const search = parseSearch(text, now());
    if (search.error) dispatch({ type: 'notice', text: search.error, error: true });
    if (!asksRunner(search)) return;
    let current = true;
    source.listRuns({ ...search.filter, limit: SEARCH_LIMIT }).then(
      (page) => {
        if (!current) return;
        dispatch({ type: 'search-loaded', text, runs: page.runs });
        const more = page.nextCursor ? ` (the newest ${SEARCH_LIMIT}; narrow the search for the rest)` : '';
        dispatch({
          type: 'notice',
          text: `the runner found ${page.runs.length} run${page.runs.length === 1 ? '' : 's'}${more}`,
        });
      },
      (error: unknown) =>
        current && dispatch({ type: 'notice', text: `Cannot search the runs: ${errorMessage(error)}`, error: true }),
    );
    return () => void (current = false);
  }, [source, dispatch, text, typing]);
}
