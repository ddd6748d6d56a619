import type { FlowControl } from '../../protocol/flow-control.js';
import type { RunFilter } from '../../api/run-query.js';
import type { Database } from 'better-sqlite3';
import type { Sql, TransactionSql } from 'postgres';
import type { Applied } from './applied.js';
import type { Change } from './changes.js';
import type { Attempt, Run, RunPage, RunStatus, Step, StepLog } from './records.js';
import type { RetentionStore } from './retention.js';
import type { ScheduleStore } from './schedules.js';

// The store's contract. Its records (records.ts), changes (changes.ts, run-patch.ts) and what an
// apply returns (applied.ts) live in modules of their own, which import nothing from here.
export * from './records.js';
export { changeRunId, type Change } from './changes.js';
export type { RunPatch } from './run-patch.js';
export type { Applied } from './applied.js';
export type { PruneCursor, RetentionStore, RunRowCounts } from './retention.js';
export type { Schedule, ScheduleStore } from './schedules.js';

export interface NewRun {
  id: string;
  url: string;
  body: string;
  headers: Record<string, string>;
  retries: number;
  retryDelayMs: number;
  idempotencyKey?: string;
  now: number;
  /** First drive this much after `now`. @default 0 */
  delayMs?: number;
  /** Flow control: the run is claimed only while its key is under its limits (never leased at insert). */
  flowControl?: FlowControl;
  /** Insert the run already `running` and leased, for a runner that drives it at once (saves a `claimDue`). */
  lease?: { owner: string; until: number };
}

/** The run list's filters are the API's (api/run-query.ts); see run-list-sql.ts for how each is indexed. */
export interface RunQuery extends RunFilter {
  /** Newest first; `cursor` is the id of the last run of the previous page. */
  cursor?: string;
  limit?: number;
}

export interface ApplyOptions {
  /**
   * Fencing: apply only if `owner` holds the lease of every run the changes touch; otherwise reject
   * with `LeaseLostError` (naming the run) and apply nothing. The runner passes its id for every
   * commit of a drive; API actions (cancel, notify, create) pass none and are not fenced.
   * Only the lease's holder is compared, not its end: a lease that ran out but that nobody took
   * is still its holder's, and committing then is safe (whoever claims next reads those results).
   */
  owner?: string;
  /**
   * Read back the runs and steps the changes touched and return them (`Applied`): inside the
   * transaction on SQLite, right after it on PostgreSQL. The runner asks only when someone listens.
   */
  returning?: boolean;
}

/** Counts for monitoring (`GET /metrics`). */
export interface StoreStats {
  /** Runs by status, every status present (0 when none). */
  runs: Record<RunStatus, number>;
  /** Unfinished runs due now whose lease is free or expired: work waiting for a runner. */
  due: number;
}

export interface ClaimOptions {
  now: number;
  limit: number;
  owner: string;
  leaseMs: number;
  /**
   * Told, after the claim commits, the runs it newly left waiting for a flow control slot (or whose
   * reason changed): the runner announces them, so the dashboards show why they wait.
   */
  onWaiting?: (runIds: string[]) => void;
}

/** What `createRun` gives: the run, and whether this call created it (false: found by its idempotency key). */
export interface CreatedRun {
  run: Run;
  created: boolean;
}

/** Runs: created by starts, read by the API and the runner. */
export interface RunStore {
  /** Creates a run, or returns the existing one for a repeated idempotency key. */
  createRun(input: NewRun): Promise<CreatedRun>;
  /**
   * Several `createRun`s, as if called at once: each settled as that call would be, in the order of
   * `inputs` (a key repeated among them creates one run, which the others find). Committed together
   * (SQLite: one transaction, one fsync; PostgreSQL: one statement, one commit; each alone if that fails).
   */
  createRuns(inputs: readonly NewRun[]): Promise<PromiseSettledResult<CreatedRun>[]>;
  getRun(id: string): Promise<Run | undefined>;
  listRuns(query: RunQuery): Promise<RunPage>;
  /** Runs by status and the due, unclaimed queue (one or two aggregate queries: for metrics, not hot paths). */
  stats(now: number): Promise<StoreStats>;
  /**
   * Resume (one transaction): a `failed` or `cancelled` run becomes `queued` and due at `now`; every
   * step that did not succeed is cleared (it runs again), every `succeeded` step is kept as it is, and
   * the failureFunction state is reset (a pending delivery is not needed any more). `resumed: false`
   * (nothing changed) when the run is in another status; undefined when there is no such run.
   * The one exception to "a finished run never changes status again".
   */
  resumeRun(runId: string, now: number): Promise<{ run: Run; resumed: boolean } | undefined>;
}

/** Steps: a run's journal, what drive requests replay from. */
export interface StepStore {
  listSteps(runId: string): Promise<Step[]>;
  /** What the run's steps printed, by step then attempt (only executions that printed something). */
  listStepLogs(runId: string): Promise<StepLog[]>;
}

/** Attempts: the log of every drive request and its answer. */
export interface AttemptStore {
  listAttempts(runId: string): Promise<Attempt[]>;
}

/** Events: `notify` and the waits it resolves or the events it keeps for later waits. */
export interface EventStore {
  /**
   * `notify`: resolves every step waiting for `eventId` with `output` and makes its run due now;
   * when none waits, keeps the event (`data`, JSON) until `keepUntil` for a wait registered later.
   * Returns the runs it woke. One transaction, so a wait and a notify cannot miss each other.
   */
  deliverEvent(input: {
    eventId: string;
    data: string;
    output: string;
    now: number;
    keepUntil: number;
  }): Promise<string[]>;
  /** Takes (and removes) the oldest kept, unexpired event with this id; its JSON data, or undefined. */
  takeEvent(eventId: string, now: number): Promise<string | undefined>;
}

/** Leases: which runner drives which run, and when the next run is due. */
export interface LeaseStore {
  /**
   * Leases up to `limit` claimable runs (unfinished, or failed with a pending failureFunction call) whose `nextAt` is due and whose lease is free or expired.
   * Two claimers never get the same run.
   */
  claimDue(options: ClaimOptions): Promise<Run[]>;
  /** Gives a lease back (the run is driven again once due). */
  release(runId: string, owner: string): Promise<void>;
  /** Extends the leases `owner` holds on these runs. */
  renew(runIds: readonly string[], owner: string, until: number): Promise<void>;
  /**
   * Clears every lease. Only for a store that one runner owns (SQLite under `wf dev`): on start it
   * takes back at once the runs a killed predecessor held, instead of waiting out their leases.
   * Never on a shared store (PostgreSQL refuses): it would hand live runs to a second runner.
   */
  releaseAll(): Promise<void>;
  /** When the next unfinished run becomes due (its `nextAt`, or its lease's end if later), for the scheduler's timer. */
  nextDueAt(): Promise<number | null>;
}

/**
 * Durable state of the runner, by concern (as vercel/workflow splits its `World`); `apply` writes
 * across them in one transaction. Async so a networked store (PostgreSQL) fits the same shape.
 * Invariant: a step that has `succeeded` is never changed again.
 */
export interface Store extends RunStore, StepStore, AttemptStore, EventStore, LeaseStore {
  /**
   * Applies changes in one transaction, in order; with `owner`, fenced (see `ApplyOptions`).
   * Returns what it wrote: the attempts, and with `returning` the touched runs and steps.
   */
  apply(changes: readonly Change[], options?: ApplyOptions): Promise<Applied>;
  /** Cron schedules (a part of their own: nothing on a run's path reads them). */
  readonly schedules: ScheduleStore;
  /**
   * The database the store keeps its tables in, for a part of the runner with tables of its own
   * beside them (the QStash engine, runner-core/qstash/stores.ts). Undefined for a store without
   * one (a test's fake): the runner then has no such part.
   */
  readonly connection?: StoreConnection;
  /** Pruning finished runs and the store's size (runner-core/retention/): a part, like the schedules. */
  readonly retention: RetentionStore;
  close(): Promise<void>;
}

/**
 * A store's database, for the runner's other parts: they query their own tables on the same
 * connection, and write a commit's `changes` inside their own transaction with `apply` (one
 * transaction for their rows and the store's). A plain value, not a getter or a function: a wrapper
 * around the store (the metrics proxy, the bench's probe) hands it on as it is.
 */
export type StoreConnection =
  | {
      kind: 'sqlite';
      db: Database;
      /** `Store.apply` without fencing, synchronous: inside a transaction of `db` it joins it (a savepoint). */
      apply(changes: readonly Change[], returning: boolean): Applied;
    }
  | {
      kind: 'postgres';
      sql: Sql<{ bigint: number }>;
      /** `Store.apply` without fencing, on `tx` (a transaction of `sql`): committed with it. */
      apply(tx: TransactionSql<{ bigint: number }>, changes: readonly Change[], returning: boolean): Promise<Applied>;
    };
