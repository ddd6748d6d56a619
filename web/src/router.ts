import { useEffect, useState } from 'preact/hooks';
import { isRunStatus, type RunStatus } from '../../view/status.js';

/** The page's routes; every one is a real path, so a copied address opens the same view. */
export type Route =
  | { page: 'runs'; status: RunStatus | null }
  | { page: 'run'; runId: string; step?: number; attempt?: number }
  | { page: 'schedules' }
  | { page: 'not-found'; path: string };

/** `/` or `/runs[?status=]`, `/runs/:id`, `/runs/:id/steps/:index`, `/runs/:id/attempts/:seq`. */
export function parseRoute(pathname: string, search: string): Route {
  if (pathname === '/' || pathname === '/runs' || pathname === '/runs/' || pathname === '/index.html') {
    const status = new URLSearchParams(search).get('status');
    return { page: 'runs', status: isRunStatus(status) ? status : null };
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
  runs: (status: RunStatus | null = null): string => (status ? `/runs?status=${status}` : '/'),
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
