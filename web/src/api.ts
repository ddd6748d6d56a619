import type { BulkRequest, BulkResult } from '../../api/bulk.js';
import type { RunSearch } from './router.js';
import { Client } from '../../api/client.js';
import type { Run, RunPage, RunStatus } from '../../api/dto.js';
import type { RunDetail } from '../../api/parse.js';
import type { StoreInfo } from '../../api/store-info.js';

const TOKEN_KEY = 'wfkit.token';

/** The runner's token, kept for this tab only (sessionStorage): closing the tab forgets it. */
export const tokenStore = {
  get(): string | null {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch {
      return null; // storage disabled: the token lives as long as the page
    }
  },
  set(token: string | null): void {
    try {
      if (token === null) sessionStorage.removeItem(TOKEN_KEY);
      else sessionStorage.setItem(TOKEN_KEY, token);
    } catch {}
  },
};

export type RunWithDetail = RunDetail;

/** The runner's HTTP API as the dashboard uses it; every failure is the contract's `ClientError`. */
export interface Api {
  /** Whether reads need the token here (then the page shows its login form), per the runner's own rule. */
  session(): Promise<{ needsToken: boolean }>;
  /** Tries a token before the page keeps it. */
  check(candidate: string): Promise<RunPage>;
  /** Runs newest first; `search` is the search bar's filters (api/run-query.ts), applied by the runner. */
  listRuns(query: {
    status: RunStatus | null;
    search?: RunSearch;
    cursor?: string | null;
    limit?: number;
  }): Promise<RunPage>;
  getRun(id: string): Promise<RunWithDetail>;
  cancel(id: string): Promise<{ run: Run }>;
  rerun(id: string): Promise<{ run: Run }>;
  /** Starts a failed or cancelled run again at its failed step. */
  resume(id: string): Promise<{ run: Run }>;
  /** Resumes, cancels or reruns every run a filter matches; `dryRun` only counts them. */
  bulk(request: BulkRequest): Promise<BulkResult>;
  /** The database's size and retention, for the footer. */
  storeInfo(): Promise<StoreInfo>;
  /** The one client (same origin), for the live events (`events.ts`). */
  readonly client: Client;
}

/**
 * The API over the one `Client`, on the page's own origin; `token` is read on every call, since
 * signing in or out changes it.
 * @example const api = createApi(() => tokenStore.get()); await api.getRun('wfr_…');
 */
export function createApi(token: () => string | null): Api {
  const client = new Client({ runnerUrl: '', token });
  return {
    client,
    session: () => new Client({ runnerUrl: '', token: '' }).session(),
    check: (candidate) => new Client({ runnerUrl: '', token: candidate }).list({ limit: 1 }),
    listRuns: ({ status, search = {}, cursor, limit = 50 }) =>
      client.list({ ...search, limit, status: status ?? undefined, cursor: cursor ?? undefined }),
    getRun: (id) => client.get(id),
    cancel: async (id) => ({ run: await client.cancel(id) }),
    rerun: async (id) => ({ run: await client.rerun(id) }),
    resume: async (id) => ({ run: await client.resume(id) }),
    bulk: (request) => client.bulk(request),
    storeInfo: () => client.storeInfo(),
  };
}
