import type { Attempt, Change, ClaimOptions, NewRun, Run, Store } from '../../runner-core/store/types.js';

/** Fixtures of the store conformance suite (store-suite.ts and its parts). */

export const T0 = 1_700_000_000_000;

/** Run ids are time-sortable; zero-padded counters sort the same way. */
export function runId(n: number): string {
  return `wfr_${String(n).padStart(26, '0')}`;
}

export function newRun(n: number, overrides: Partial<NewRun> = {}): NewRun {
  return {
    id: runId(n),
    url: 'http://localhost:3000/api/wf',
    body: '{"text":"hi"}',
    headers: { 'content-type': 'application/json' },
    retries: 3,
    retryDelayMs: 1000,
    now: T0 + n,
    ...overrides,
  };
}

export function attempt(id: string, seq: number, overrides: Partial<Attempt> = {}): Attempt {
  return {
    runId: id,
    seq,
    startedAt: T0 + seq,
    durationMs: 12,
    requestUrl: 'http://localhost:3000/api/wf',
    requestHeaders: { 'wf-run-id': id },
    requestBody: '{}',
    responseStatus: 200,
    responseHeaders: { 'content-type': 'application/x-ndjson' },
    responseBody: '{"type":"done"}\n',
    outcome: 'done',
    error: null,
    ...overrides,
  };
}

export const started = (id: string, index: number, at: number): Change => ({
  type: 'step-started',
  runId: id,
  index,
  name: `s${index}`,
  kind: 'run',
  group: null,
  at,
});
export const succeeded = (id: string, index: number, output: string | null, at: number): Change => ({
  type: 'step-succeeded',
  runId: id,
  index,
  name: `s${index}`,
  kind: 'run',
  output,
  at,
  durationMs: 5,
});
export const failed = (id: string, index: number, status: 'retrying' | 'failed', at: number): Change => ({
  type: 'step-failed',
  runId: id,
  index,
  name: `s${index}`,
  kind: 'run',
  status,
  at,
  durationMs: 7,
  error: { name: 'Error', message: `boom at ${at}`, stack: 'Error: boom\n    at x' },
});

/**
 * Leases one given run to `owner` if it is due and free, through `claimDue` (the store has no
 * single-run claim: the runner never needs one). Due runs claimed besides it are given back.
 */
export async function claimRun(
  store: Store,
  id: string,
  options: Omit<ClaimOptions, 'limit'>,
): Promise<Run | undefined> {
  const claimed = await store.claimDue({ ...options, limit: 10_000 });
  for (const run of claimed) if (run.id !== id) await store.release(run.id, options.owner);
  return claimed.find((run) => run.id === id);
}
