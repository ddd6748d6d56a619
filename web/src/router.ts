import { useEffect, useState } from 'preact/hooks';
import { parseTimeText, type RunFilter } from '../../api/run-query.js';
import { isRunStatus, type RunStatus } from '../../view/status.js';

/** The runs page's search bar: the run list's filters but status (the chips), kept in the address. */
export type RunSearch = Omit<RunFilter, 'status'>;
const SEARCH_TEXT = ['idPrefix', 'url', 'urlPrefix', 'failedStep'] as const;
const SEARCH_TIME = ['createdAfter', 'createdBefore'] as const;

/** The search in a query string: what a copied address keeps (bad values dropped, as a bad status is). */
export function parseSearch(params: URLSearchParams): RunSearch {
  const search: RunSearch = {};
  for (const key of SEARCH_TEXT) {
    const value = params.get(key)?.trim();
    if (value) search[key] = value;
  }
  for (const key of SEARCH_TIME) {
    const at = parseTimeText(params.get(key) ?? '');
    if (at !== undefined) search[key] = at;
  }
  return search;
}

/** The page's routes; every one is a real path, so a copied address opens the same view. */
export type Route =
  | { page: 'runs'; status: RunStatus | null; search?: RunSearch }
  | { page: 'run'; runId: string; step?: number; attempt?: number }
  | { page: 'schedules' }
  | { page: 'not-found'; path: string };

/** `/` or `/runs[?status=&idPrefix=&url=&urlPrefix=&failedStep=&createdAfter=&createdBefore=]`, `/runs/:id`, `/runs/:id/steps/:index`, `/runs/:id/attempts/:seq`. */
export function parseRoute(pathname: string, search: string): Route {
  if (pathname === '/' || pathname === '/runs' || pathname === '/runs/' || pathname === '/index.html') {
    const params = new URLSearchParams(search);
    const status = params.get('status');
    const filters = parseSearch(params);
    return {
      page: 'runs',
      status: isRunStatus(status) ? status : null,
      ...(Object.keys(filters).length > 0 && { search: filters }),
    };
  }
  if (pathname === '/schedules' || pathname === '/schedules/') return { page: 'schedules' };
  const match = /^\/runs\/([^/]+)(?:\/(steps|attempts)\/(\d+))?\/?$/.exec(pathname);
  if (!match) return { page: 'not-found', path: pathname };
  let runId: string;
  try {
    runId = decodeURIComponent(match[1]!);
  } catch {
    return { page: 'not-found', path: pathname };
  }
  if (match[2] === 'steps') return { page: 'run', runId, step: Number(match[3]) };
  if (match[2] === 'attempts') return { page: 'run', runId, attempt: Number(match[3]) };
  return { page: 'run', runId };
}

/** Internal paths only: every link of the page is built here, never from a value a run holds. */
export const paths = {
  runs: (status: RunStatus | null = null, search: RunSearch = {}): string => {
    const params = new URLSearchParams();
    if (status) params.set('status', status);
    for (const key of SEARCH_TEXT) if (search[key]) params.set(key, search[key]);
    for (const key of SEARCH_TIME) if (search[key] !== undefined) params.set(key, String(search[key]));
    return params.size > 0 ? `/runs?${params}` : '/';
  },
  run: (runId: string): string => `/runs/${encodeURIComponent(runId)}`,
  step: (runId: string, index: number): string => `/runs/${encodeURIComponent(runId)}/steps/${index}`,
  schedules: (): string => '/schedules',
  attempt: (runId: string, seq: number): string => `/runs/${encodeURIComponent(runId)}/attempts/${seq}`,
};

const listeners = new Set<() => void>();

/** Goes to an internal path without reloading the page. */
export function navigate(path: string, replace = false): void {
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  window.scrollTo(0, 0);
  for (const listener of listeners) listener();
}

/** The current route; re-renders on navigation and on back/forward. */
export function useRoute(): Route {
  const read = (): Route => parseRoute(location.pathname, location.search);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = (): void => setRoute(read());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return route;
}
