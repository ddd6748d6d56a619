import type { Attempt, Run, RunPage, RunStatus, Step } from '../../runner-core/store/types.js';

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

/** An answer of the runner other than 2xx, with its `{ error: { code, message } }`. */
export class ApiFailure extends Error {
  override name = 'ApiFailure';
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export interface RunWithDetail {
  run: Run;
  steps: Step[];
  attempts: Attempt[];
}

/** Adds the bearer token, when there is one, to a request's headers. */
export function authHeaders(token: string | null): Record<string, string> {
  return token === null ? {} : { authorization: `Bearer ${token}` };
}

async function request<T>(path: string, token: string | null, init: RequestInit = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers: { accept: 'application/json', ...authHeaders(token), ...(init.headers as Record<string, string> | undefined) } });
  } catch (error) {
    throw new ApiFailure(0, 'NETWORK', `The runner did not answer (${(error as Error).message}).`);
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiFailure(response.status, error?.code ?? 'HTTP', error?.message ?? `The runner answered ${response.status} to ${init.method ?? 'GET'} ${path}.`);
  }
  return body as T;
}

/** The runner's HTTP API as the dashboard uses it. */
export interface Api {
  /** Whether reads need the token here (then the page shows its login form), per the runner's own rule. */
  session(): Promise<{ needsToken: boolean }>;
  /** Tries a token before the page keeps it. */
  check(candidate: string): Promise<RunPage>;
  listRuns(query: { status: RunStatus | null; cursor?: string | null; limit?: number }): Promise<RunPage>;
  getRun(id: string): Promise<RunWithDetail>;
  cancel(id: string): Promise<{ run: Run }>;
  rerun(id: string): Promise<{ run: Run }>;
}

/**
 * The API client; `token` is read on every call, since signing in or out changes it.
 * @example const api = createApi(() => tokenStore.get()); await api.getRun('wfr_…');
 */
export function createApi(token: () => string | null): Api {
  const run = (id: string): string => `/v1/runs/${encodeURIComponent(id)}`;
  return {
    session: () => request('/v1/session', null),
    check: (candidate) => request('/v1/runs?limit=1', candidate),
    listRuns: ({ status, cursor, limit = 50 }) => {
      const params = new URLSearchParams({ limit: String(limit) });
      if (status) params.set('status', status);
      if (cursor) params.set('cursor', cursor);
      return request(`/v1/runs?${params}`, token());
    },
    getRun: (id) => request(run(id), token()),
    cancel: (id) => request(`${run(id)}/cancel`, token(), { method: 'POST' }),
    rerun: (id) => request(`${run(id)}/rerun`, token(), { method: 'POST' }),
  };
}
