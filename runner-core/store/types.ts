import type { SerializedError } from '../../protocol/errors.js';
import type { StepKind } from '../../protocol/messages.js';

export type RunStatus = 'queued' | 'running' | 'sleeping' | 'waiting' | 'completed' | 'failed' | 'cancelled';
export type StepStatus = 'running' | 'retrying' | 'succeeded' | 'failed' | 'cancelled';

export const FINISHED_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled']);

/** One workflow run. Times are epoch milliseconds. */
export interface Run {
  id: string;
  url: string;
  status: RunStatus;
  /** The start request's raw body and (redacted) headers. */
  body: string;
  headers: Record<string, string>;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** When the run is next due for a drive request; null when nothing is scheduled. */
  nextAt: number | null;
  /** Consecutive failed attempts at the current position (0 after progress). */
  failures: number;
  /** Retry policy: retries after the first attempt, and the backoff base. */
  retries: number;
  retryDelayMs: number;
  /** Succeeded steps. */
  stepsDone: number;
  /** Total drive requests made. */
  attempts: number;
  output: string | null;
  error: SerializedError | null;
  idempotencyKey: string | null;
}

/** One step of a run, by position. */
export interface Step {
  runId: string;
  index: number;
  name: string;
  kind: StepKind;
  status: StepStatus;
  output: string | null;
  error: SerializedError | null;
  startedAt: number;
  finishedAt: number | null;
  durationMs: number | null;
  /** Times the route started executing this step; more than 1 means it re-executed (at-least-once). */
  executions: number;
  /** Failed executions so far. */
  failures: number;
}

/** One drive request to the route and what came back: the log the dashboards show. */
export interface Attempt {
  runId: string;
  seq: number;
  startedAt: number;
  durationMs: number;
  requestUrl: string;
  requestHeaders: Record<string, string>;
  requestBody: string;
  responseStatus: number | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  /** How the attempt ended: done, failed, continue, or a transport problem (error is set). */
  outcome: string;
  error: SerializedError | null;
}

export interface NewRun {
  id: string;
  url: string;
  body: string;
  headers: Record<string, string>;
  retries: number;
  retryDelayMs: number;
  idempotencyKey?: string;
  now: number;
}

export interface RunQuery {
  status?: RunStatus;
  /** Newest first; `cursor` is the id of the last run of the previous page. */
  cursor?: string;
  limit?: number;
}

export interface RunPage {
  runs: Run[];
  nextCursor: string | null;
}

/** Fields of a run the runner changes as it drives it. */
export type RunPatch = Partial<Pick<Run, 'status' | 'nextAt' | 'failures' | 'finishedAt' | 'output' | 'error' | 'attempts'>>;

/**
 * One durable change. The runner batches many (from many runs) into one `apply`, which is one
 * transaction: this is what makes a commit per step cheap.
 */
export type Change =
  | { type: 'step-started'; runId: string; index: number; name: string; kind: StepKind; at: number }
  | { type: 'step-succeeded'; runId: string; index: number; name: string; kind: StepKind; output: string | null; at: number; durationMs: number }
  | {
      type: 'step-failed';
      runId: string;
      index: number;
      name: string;
      kind: StepKind;
      error: SerializedError;
      /** `retrying` while retries remain, else `failed`. */
      status: 'retrying' | 'failed';
      at: number;
      durationMs: number;
    }
  | { type: 'attempt'; attempt: Attempt }
  | { type: 'run'; runId: string; patch: RunPatch; at: number };

export interface ClaimOptions {
  now: number;
  limit: number;
  owner: string;
  leaseMs: number;
}

/**
 * Durable state of the runner. Async so a networked store (PostgreSQL) fits the same shape.
 * Invariant: a step that has `succeeded` is never changed again.
 */
export interface Store {
  /** Creates a run, or returns the existing one for a repeated idempotency key. */
  createRun(input: NewRun): Promise<{ run: Run; created: boolean }>;
  getRun(id: string): Promise<Run | undefined>;
  listRuns(query: RunQuery): Promise<RunPage>;
  listSteps(runId: string): Promise<Step[]>;
  listAttempts(runId: string): Promise<Attempt[]>;
  /** Applies changes in one transaction, in order. */
  apply(changes: readonly Change[]): Promise<void>;
  /**
   * Leases up to `limit` unfinished runs whose `nextAt` is due and whose lease is free or expired.
   * Two claimers never get the same run.
   */
  claimDue(options: ClaimOptions): Promise<Run[]>;
  /** Leases one given run (a run just started is driven at once, without waiting for a poll). */
  claim(runId: string, options: Omit<ClaimOptions, 'limit'>): Promise<Run | undefined>;
  /** Gives a lease back (the run is driven again once due). */
  release(runId: string, owner: string): Promise<void>;
  /** Extends the leases `owner` holds on these runs. */
  renew(runIds: readonly string[], owner: string, until: number): Promise<void>;
  /**
   * Clears every lease. Only for a store that one runner owns (SQLite under `wf dev`): on start it
   * takes back at once the runs a killed predecessor held, instead of waiting out their leases.
   */
  releaseAll(): Promise<void>;
  /** When the next unfinished run becomes due (its `nextAt`, or its lease's end if later), for the scheduler's timer. */
  nextDueAt(): Promise<number | null>;
  close(): Promise<void>;
}
