import type { Run } from '../api/dto.js';
import { isEmptyRunFilter, matchesRunFilter, parseTimeText, type RunFilter } from '../api/run-query.js';
import { RUN_STATUSES, type RunStatus } from '../api/dto.js';
import { toMilliseconds } from '../protocol/duration.js';

/*
 * The `/` prompt's text: plain words narrow the loaded runs (each must appear in the id, URL or
 * status), and `key:value` terms are the runner's search (api/run-query.ts), asked of the runner
 * when the prompt closes, so they find runs older than the loaded history too:
 *   status:failed,cancelled   url:https://app/api/   step:charge (a step that failed)
 *   id:wfr_01J…   since:2h | since:2026-01-31   until:…
 */

export interface Search {
  /** The runner's filter the terms make (empty without terms). */
  filter: RunFilter;
  /** Plain words, lower-cased. */
  words: string[];
  /** What was wrong with a term (the term is left out). */
  error?: string;
}

const KEYS = ['status', 'url', 'step', 'id', 'since', 'until'] as const;
export const SEARCH_HELP = 'words, or status: url: step: id: since: until:';

/** `2h` ago, or a date (ISO 8601 / epoch ms), as epoch ms. */
function timeOf(text: string, now: number): number | undefined {
  if (/^\d+(\.\d+)?(ms|s|m|h|d|w)$/.test(text)) return now - toMilliseconds(text, 'a search time');
  return parseTimeText(text);
}

export function parseSearch(text: string, now: number): Search {
  const search: Search = { filter: {}, words: [] };
  for (const term of text
    .trim()
    .split(/\s+/)
    .filter((t) => t !== '')) {
    const colon = term.indexOf(':');
    const key = colon > 0 ? term.slice(0, colon).toLowerCase() : '';
    const value = term.slice(colon + 1);
    // `http://…` has a colon too: only our keys make a term.
    if (!(KEYS as readonly string[]).includes(key) || value === '') {
      search.words.push(term.toLowerCase());
      continue;
    }
    if (key === 'status') {
      const statuses = value.split(',').filter((s) => s !== '');
      const bad = statuses.find((s) => !(RUN_STATUSES as readonly string[]).includes(s));
      if (bad !== undefined) search.error = `Unknown status "${bad}": expected ${RUN_STATUSES.join(', ')}.`;
      else search.filter.status = statuses as RunStatus[];
    } else if (key === 'since' || key === 'until') {
      const at = timeOf(value, now);
      if (at === undefined)
        search.error = `Expected ${key}: to be a duration ago like 2h or a date like 2026-01-31T12:00, got "${value}".`;
      else search.filter[key === 'since' ? 'createdAfter' : 'createdBefore'] = at;
    } else {
      search.filter[key === 'url' ? 'urlPrefix' : key === 'step' ? 'failedStep' : 'idPrefix'] = value;
    }
  }
  return search;
}

/** Whether the text has terms for the runner (then the dashboard asks it). */
export function asksRunner(search: Search): boolean {
  return !isEmptyRunFilter(search.filter);
}

/**
 * A test for the runs the prompt's text lets through. `found`: the runs the runner answered for
 * this text, which alone can say which runs had a step fail (a run does not carry its steps).
 */
export function searchMatcher(text: string, now: number, found?: ReadonlySet<string>): (run: Run) => boolean {
  const { filter, words } = parseSearch(text, now);
  return (run) => {
    const byTerms = matchesRunFilter(run, filter);
    if (byTerms === false || (byTerms === undefined && !found?.has(run.id))) return false;
    if (words.length === 0) return true;
    const haystack = `${run.id} ${run.url} ${run.status}`.toLowerCase();
    return words.every((word) => haystack.includes(word));
  };
}
