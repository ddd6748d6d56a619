import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Api } from './api.js';
import type { StreamStatus } from './events.js';
import type { Action, DashboardState } from './state.js';

/** What every page reads: the state, the API, and whether cancel and rerun are allowed. */
export interface Dashboard {
  state: DashboardState;
  dispatch: (action: Action) => void;
  api: Api;
  /** Loopback without a token, or any address with one; the runner checks again anyway. */
  canWrite: boolean;
  /** Rises each time the event stream (re)connects: pages reload what they show then. */
  reloads: number;
  stream: StreamStatus;
  /** Turns a failed request into a message; a 401 sends the page to its login form. */
  describe: (error: unknown) => string;
}

export const DashboardContext = createContext<Dashboard | null>(null);

export function useDashboard(): Dashboard {
  const dashboard = useContext(DashboardContext);
  if (!dashboard) throw new Error('useDashboard() outside <DashboardContext.Provider>.');
  return dashboard;
}
