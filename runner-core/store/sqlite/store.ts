import { SqliteSchedules } from './schedules.js';
import { SqliteRetention } from './retention.js';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { LeaseLostError } from '../errors.js';
import { CLAIMABLE, UNFINISHED } from '../claimable.js';
import { RESUMABLE, RESUME_CLEARS } from '../resume.js';
import { writeStatements } from '../write-sql.js';
import { patchAssignments, RUN_PATCH_FIELDS, type RunPatchField } from '../run-patch.js';
import { admit, type FlowCandidate } from '../flow-admission.js';
import { flowUsageReader } from './flow-usage.js';

import { migrate } from '../migrations/sqlite.js';
import { runListSql } from '../run-list-sql.js';
import { appliedAttempts, readApplied, touchedBy, type Applied } from '../applied.js';
import { stepLogParams, toStepLog, type StepLogRow } from '../step-log-rows.js';
import {
  attemptParams,
  pageLimit,
  toAttempt,
  toJson,
  toRun,
  toRunPage,
  toStep,
  type AttemptRow,
  type RunRow,
  type StepRow,
} from '../rows.js';
import { changeRunId, RUN_STATUSES } from '../types.js';
import type * as S from '../types.js';

/** Due rows read beyond a claim's limit, so runs of a full flow key do not starve the others. */
const FLOW_LOOKAHEAD = 16;

/** A run a claim may take at `@now`: claimable, due, its lease over, its flow key's wait over. */
export const CLAIMABLE_NOW = `${CLAIMABLE} AND next_at IS NOT NULL AND next_at <= @now
      AND (lease_until IS NULL OR lease_until < @now) AND (flow_wait_until IS NULL OR flow_wait_until <= @now)`;

// ---- run patches: one statement, each field guarded by a "set it" flag ----

// The fields and columns are run-patch.ts's (the list PostgreSQL's wfkit_apply is built from too).
const PATCH_SQL = `UPDATE runs SET ${patchAssignments({
  isSet: (_, { column }) => `@set_${column}`,
  value: (_, { column }) => `@${column}`,
}).join(', ')}, updated_at = @at WHERE id = @id`;

/** `undefined` means "leave as is"; `null` means "set to NULL" (a sleeping run has no nextAt). */
function patchParams(runId: string, patch: S.RunPatch, at: number): Record<string, unknown> {
  const params: Record<string, unknown> = { id: runId, at };
  for (const [field, { column, type }] of Object.entries(RUN_PATCH_FIELDS)) {
    const value = patch[field as RunPatchField];
    params[`set_${column}`] = value === undefined ? 0 : 1;
    params[column] = value === undefined ? null : type === 'json' ? toJson(value) : value;
  }
  return params;
}

// ---- statements ----

/** The change statements both stores share (write-sql.ts), with SQLite's named parameters. */
const w = writeStatements((name) => `@${name}`);

function prepareStatements(db: Database.Database) {
  return {
    runById: db.prepare('SELECT * FROM runs WHERE id = ?'),
    runByKey: db.prepare('SELECT * FROM runs WHERE idempotency_key = ?'),
    insertRun:
      db.prepare(`INSERT INTO runs (id, url, status, body, headers, created_at, updated_at, next_at, retries, retry_delay_ms, idempotency_key,
        flow_key, flow_parallelism, flow_rate, flow_period_ms, lease_owner, lease_until)
      VALUES (@id, @url, @status, @body, @headers, @now, @now, @nextAt, @retries, @retryDelayMs, @idempotencyKey,
        @flowKey, @flowParallelism, @flowRate, @flowPeriodMs, @leaseOwner, @leaseUntil) RETURNING *`),
    steps: db.prepare('SELECT * FROM steps WHERE run_id = ? ORDER BY idx'),
    attempts: db.prepare('SELECT * FROM attempts WHERE run_id = ? ORDER BY seq'),
    stepLogs: db.prepare('SELECT * FROM step_logs WHERE run_id = ? ORDER BY idx, attempt'),
    // A commit repeated (the same attempt's lines again) changes nothing.
    insertStepLogs: db.prepare(`INSERT INTO step_logs (run_id, idx, attempt, name, status, at, lines, dropped)
      VALUES (@runId, @index, @attempt, @name, @status, @at, @lines, @dropped) ON CONFLICT (run_id, idx, attempt) DO NOTHING`),
    stepStarted: db.prepare(w.stepStarted),
    stepSucceeded: db.prepare(w.stepSucceeded),
    stepFailed: db.prepare(w.stepFailed),
    stepSuspended: db.prepare(w.stepSuspended),
    addExecutions: db.prepare(w.executionsReported),
    closeSteps: db.prepare(w.stepsClosed),
    waiting: db.prepare(`SELECT steps.run_id, steps.idx FROM steps JOIN runs ON runs.id = steps.run_id
      WHERE steps.event_id = ? AND steps.status = 'running' AND steps.kind = 'wait' AND runs.${UNFINISHED}`),
    resolveWait:
      db.prepare(`UPDATE steps SET status = 'succeeded', output = @output, finished_at = @now, duration_ms = @now - started_at
      WHERE run_id = @runId AND idx = @index AND status = 'running'`),
    wakeRun: db.prepare(`UPDATE runs SET next_at = @now, updated_at = @now WHERE id = @runId AND ${UNFINISHED}`),
    keepEvent: db.prepare('INSERT INTO events (event_id, data, created_at, keep_until) VALUES (?, ?, ?, ?)'),
    firstEvent: db.prepare('SELECT seq, data FROM events WHERE event_id = ? AND keep_until > ? ORDER BY seq LIMIT 1'),
    dropEvent: db.prepare('DELETE FROM events WHERE seq = ?'),
    dropExpiredEvents: db.prepare('DELETE FROM events WHERE keep_until <= ?'),
    countStepsDone: db.prepare(w.stepsDone),
    insertAttempt: db.prepare(w.attempt),
    patchRun: db.prepare(PATCH_SQL),
    due: db.prepare(`SELECT * FROM runs WHERE ${CLAIMABLE_NOW} ORDER BY next_at LIMIT @limit`),
    anyDue: db.prepare(`SELECT 1 FROM runs WHERE ${CLAIMABLE_NOW} LIMIT 1`).pluck(),
    flowExecuting: db
      .prepare(`SELECT COUNT(*) FROM runs WHERE flow_key = @key AND ${CLAIMABLE}
      AND lease_owner IS NOT NULL AND lease_until >= @now`)
      .pluck(),
    flowStarted: db.prepare(
      'SELECT COUNT(*) AS n, MIN(flow_started_at) AS oldest FROM runs WHERE flow_key = @key AND flow_started_at > @since',
    ),
    flowLease: db.prepare(
      'UPDATE runs SET flow_started_at = COALESCE(flow_started_at, @now), flow_wait_until = NULL, flow_wait_reason = NULL WHERE id = @id',
    ),
    flowPark: db.prepare('UPDATE runs SET flow_wait_until = @until, flow_wait_reason = @reason WHERE id = @id'),
    lease: db.prepare('UPDATE runs SET lease_owner = @owner, lease_until = @until WHERE id = @id'),
    release: db.prepare(w.release),
    renew: db.prepare('UPDATE runs SET lease_until = ? WHERE id = ? AND lease_owner = ?'),
    // A leased run is not due before its lease runs out, whatever its next_at says.
    nextDue: db
      .prepare(
        `SELECT MIN(MAX(next_at, COALESCE(lease_until, 0), COALESCE(flow_wait_until, 0))) FROM runs WHERE ${CLAIMABLE} AND next_at IS NOT NULL`,
      )
      .pluck(),
    releaseAll: db.prepare('UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL'),
    leaseOf: db.prepare('SELECT lease_owner FROM runs WHERE id = ?').pluck(),
    // Resume (resume.ts): only failed or cancelled runs; the lease goes too.
    resumeRun: db.prepare(`UPDATE runs SET status = 'queued', next_at = @now, updated_at = @now, ${RESUME_CLEARS}
      WHERE id = @id AND ${RESUMABLE}`),
    clearUnsucceededSteps: db.prepare(`DELETE FROM steps WHERE run_id = ? AND status != 'succeeded'`),
    countByStatus: db.prepare('SELECT status, COUNT(*) AS n FROM runs GROUP BY status'),
    countDue: db
      .prepare(`SELECT COUNT(*) FROM runs WHERE ${CLAIMABLE} AND next_at IS NOT NULL AND next_at <= @now
      AND (lease_until IS NULL OR lease_until < @now)`)
      .pluck(),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

/** The default `Store`: one SQLite file (or `:memory:`), synchronous under async signatures. */
export class SqliteStore implements S.Store {
  readonly #db: Database.Database;
  readonly schedules: SqliteSchedules;
  readonly connection: S.StoreConnection;
  readonly retention: SqliteRetention;
  readonly #s: Statements;
  /** The run list's statements by SQL text: one per combination of filters, so a few dozen at most. */
  readonly #listStatements = new Map<string, Database.Statement>();
  readonly #createTx: (inputs: readonly S.NewRun[]) => S.CreatedRun[];
  readonly #applyTx: (changes: readonly S.Change[], owner: string | undefined, returning: boolean) => Applied;
  readonly #claimDueTx: (options: S.ClaimOptions) => { runs: S.Run[]; waiting: string[] };
  readonly #renewTx: (runIds: readonly string[], owner: string, until: number) => void;
  readonly #deliverTx: (input: {
    eventId: string;
    data: string;
    output: string;
    now: number;
    keepUntil: number;
  }) => string[];
  readonly #takeEventTx: (eventId: string, now: number) => string | undefined;
  readonly #resumeTx: (runId: string, now: number) => { run: S.Run; resumed: boolean } | undefined;

  // No clock option: every method takes its times as arguments.
  constructor(path: string) {
    if (path !== ':memory:' && path !== '') mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    this.#db = db;
    db.pragma('journal_mode = WAL');
    // FULL: a step result reported as committed survives power loss, not just a process crash.
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.pragma('foreign_keys = ON');
    migrate(db);
    this.schedules = new SqliteSchedules(db);
    this.retention = new SqliteRetention(db);
    const s = prepareStatements(db);
    this.#s = s;
    // IMMEDIATE takes the write lock up front, so a read-then-write (idempotency check, claim)
    // cannot interleave with another connection's write and then fail with SQLITE_BUSY.
    const create = db.transaction((inputs: readonly S.NewRun[]) => inputs.map((input) => this.#create(input)));
    this.#createTx = (inputs) => create.immediate(inputs);
    const apply = db.transaction(
      (changes: readonly S.Change[], owner: string | undefined, returning: boolean): Applied => {
        // Fencing, inside the write transaction: one indexed read per touched run.
        if (owner !== undefined) {
          for (const runId of new Set(changes.map(changeRunId))) {
            const holder = s.leaseOf.get(runId) as string | null | undefined;
            // An unknown run is left to the change itself (a foreign key error, or nothing to release).
            if (holder !== undefined && holder !== owner) throw new LeaseLostError(runId, owner, holder);
          }
        }
        const stepsDone = new Map<string, number>();
        for (const change of changes) this.#applyOne(change, stepsDone);
        // One update per run for all its steps that succeeded in this commit, not one per step.
        for (const [runId, count] of stepsDone) s.countStepsDone.run({ runId, count });
        // Read back in the same transaction: what listeners are told is exactly what was committed.
        if (!returning) return appliedAttempts(changes);
        const getRun = (id: string): S.Run | undefined => {
          const row = s.runById.get(id) as RunRow | undefined;
          return row ? toRun(row) : undefined;
        };
        return readApplied(touchedBy(changes), getRun, (runId) => (s.steps.all(runId) as StepRow[]).map(toStep));
      },
    );
    this.#applyTx = (changes, owner, returning) => apply.immediate(changes, owner, returning);
    this.connection = {
      kind: 'sqlite',
      db,
      apply: (changes, returning) =>
        changes.length === 0 ? appliedAttempts(changes) : apply.immediate(changes, undefined, returning),
    };
    const claimDue = db.transaction(({ now, limit, owner, leaseMs }: S.ClaimOptions) => {
      // LIMIT with a negative value means "no limit" in SQLite; never let that through.
      const take = Math.max(0, Math.trunc(limit));
      // Read past the limit: runs of a full flow key are skipped (and parked), not counted.
      const due = s.due.all({ now, limit: take === 0 ? 0 : take * 2 + FLOW_LOOKAHEAD }) as (RunRow & FlowCandidate)[];
      const { admitted, parked } = admit(due, take, now, flowUsageReader(s.flowExecuting, s.flowStarted, now));
      for (const row of admitted) {
        s.lease.run({ id: row.id, owner, until: now + leaseMs });
        if (row.flow_key !== null) s.flowLease.run({ id: row.id, now });
      }
      for (const wait of parked) s.flowPark.run({ id: wait.id, until: wait.until, reason: wait.reason });
      const before = new Map(due.map((row) => [row.id, row.flow_wait_reason]));
      return {
        runs: admitted.map(toRun),
        waiting: parked.filter((wait) => before.get(wait.id) !== wait.reason).map((wait) => wait.id),
      };
    });
    this.#claimDueTx = (options) => claimDue.immediate(options);
    const renew = db.transaction((runIds: readonly string[], owner: string, until: number) => {
      for (const id of runIds) s.renew.run(until, id, owner);
    });
    this.#renewTx = (runIds, owner, until) => renew.immediate(runIds, owner, until);
    const deliver = db.transaction(
      ({
        eventId,
        data,
        output,
        now,
        keepUntil,
      }: {
        eventId: string;
        data: string;
        output: string;
        now: number;
        keepUntil: number;
      }) => {
        s.dropExpiredEvents.run(now);
        const waiting = s.waiting.all(eventId) as { run_id: string; idx: number }[];
        if (waiting.length === 0) s.keepEvent.run(eventId, data, now, keepUntil);
        for (const step of waiting) {
          s.resolveWait.run({ runId: step.run_id, index: step.idx, output, now });
          s.countStepsDone.run({ runId: step.run_id, count: 1 });
          s.wakeRun.run({ runId: step.run_id, now });
        }
        return [...new Set(waiting.map((step) => step.run_id))];
      },
    );
    this.#deliverTx = (input) => deliver.immediate(input);
    const take = db.transaction((eventId: string, now: number) => {
      const row = s.firstEvent.get(eventId, now) as { seq: number; data: string } | undefined;
      if (row) s.dropEvent.run(row.seq);
      return row?.data;
    });
    this.#takeEventTx = (eventId, now) => take.immediate(eventId, now);
    const resume = db.transaction((runId: string, now: number) => {
      const resumed = s.resumeRun.run({ id: runId, now }).changes > 0;
      if (resumed) s.clearUnsucceededSteps.run(runId);
      const row = s.runById.get(runId) as RunRow | undefined;
      return row ? { run: toRun(row), resumed } : undefined;
    });
    this.#resumeTx = (runId, now) => resume.immediate(runId, now);
  }

  #listStatement(text: string): Database.Statement {
    let statement = this.#listStatements.get(text);
    if (!statement) this.#listStatements.set(text, (statement = this.#db.prepare(text)));
    return statement;
  }

  #create(input: S.NewRun): S.CreatedRun {
    const key = input.idempotencyKey ?? null;
    if (key !== null) {
      const existing = this.#s.runByKey.get(key) as RunRow | undefined;
      if (existing) return { run: toRun(existing), created: false };
    }
    const row = this.#s.insertRun.get({
      id: input.id,
      url: input.url,
      body: input.body,
      headers: JSON.stringify(input.headers),
      now: input.now,
      nextAt: input.now + (input.delayMs ?? 0),
      status: input.lease ? 'running' : 'queued',
      retries: input.retries,
      retryDelayMs: input.retryDelayMs,
      idempotencyKey: key,
      flowKey: input.flowControl?.key ?? null,
      flowParallelism: input.flowControl?.parallelism ?? null,
      flowRate: input.flowControl?.rate ?? null,
      flowPeriodMs: input.flowControl?.periodMs ?? null,
      leaseOwner: input.lease?.owner ?? null,
      leaseUntil: input.lease?.until ?? null,
    }) as RunRow;
    return { run: toRun(row), created: true };
  }

  /** Writes one change; a step that succeeded here is counted into `stepsDone` (by run) for the caller to write. */
  #applyOne(change: S.Change, stepsDone: Map<string, number>): void {
    const s = this.#s;
    switch (change.type) {
      case 'step-started': {
        const { runId, index, name, kind, group, at } = change;
        s.stepStarted.run({ runId, index, name, kind, group, at });
        return;
      }
      case 'step-suspended': {
        const { runId, index, name, kind, group, until, eventId, at } = change;
        s.stepSuspended.run({ runId, index, name, kind, group, until, eventId, request: toJson(change.request), at });
        return;
      }
      case 'release':
        s.release.run({ runId: change.runId, owner: change.owner });
        return;
      case 'executions-reported':
        s.addExecutions.run({ runId: change.runId, index: change.index, count: change.count });
        return;
      case 'steps-closed':
        s.closeSteps.run({ runId: change.runId, status: change.status, at: change.at });
        return;
      case 'step-succeeded': {
        const { runId, index, name, kind, output, at, durationMs, started } = change;
        const result = s.stepSucceeded.run({
          runId,
          index,
          name,
          kind,
          output,
          at,
          durationMs,
          startedAt: at - durationMs,
          group: started?.group ?? null,
          startedHere: started ? 1 : 0,
        });
        // 0 changes: the step had already succeeded, and the first committed result wins.
        if (result.changes > 0) stepsDone.set(runId, (stepsDone.get(runId) ?? 0) + 1);
        return;
      }
      case 'step-failed': {
        const { runId, index, name, kind, status, at, durationMs } = change;
        s.stepFailed.run({
          runId,
          index,
          name,
          kind,
          status,
          error: toJson(change.error),
          at,
          durationMs,
          startedAt: at - durationMs,
        });
        return;
      }
      case 'attempt':
        s.insertAttempt.run(attemptParams(change.attempt));
        return;
      case 'step-logs':
        s.insertStepLogs.run(stepLogParams(change));
        return;
      case 'run': {
        const result = s.patchRun.run(patchParams(change.runId, change.patch, change.at));
        if (result.changes === 0)
          throw new Error(`Expected run ${change.runId} to exist for a run patch, but it was not found.`);
        return;
      }
    }
  }

  async createRun(input: S.NewRun): Promise<S.CreatedRun> {
    return this.#createTx([input])[0]!;
  }

  async createRuns(inputs: readonly S.NewRun[]): Promise<PromiseSettledResult<S.CreatedRun>[]> {
    try {
      return this.#createTx(inputs).map((value) => ({ status: 'fulfilled', value }));
    } catch (error) {
      if (inputs.length === 1) return [{ status: 'rejected', reason: error }];
      // One input that cannot be created must not fail the others that shared its transaction.
      return Promise.allSettled(inputs.map((input) => this.createRun(input)));
    }
  }

  async getRun(id: string): Promise<S.Run | undefined> {
    const row = this.#s.runById.get(id) as RunRow | undefined;
    return row ? toRun(row) : undefined;
  }

  async listRuns(query: S.RunQuery): Promise<S.RunPage> {
    const limit = pageLimit(query.limit);
    const { text, params } = runListSql(query, limit + 1, 'sqlite');
    return toRunPage(this.#listStatement(text).all(...params) as RunRow[], limit);
  }

  async resumeRun(runId: string, now: number): Promise<{ run: S.Run; resumed: boolean } | undefined> {
    return this.#resumeTx(runId, now);
  }

  async listSteps(runId: string): Promise<S.Step[]> {
    return (this.#s.steps.all(runId) as StepRow[]).map(toStep);
  }

  async listAttempts(runId: string): Promise<S.Attempt[]> {
    return (this.#s.attempts.all(runId) as AttemptRow[]).map(toAttempt);
  }

  async listStepLogs(runId: string): Promise<S.StepLog[]> {
    return (this.#s.stepLogs.all(runId) as StepLogRow[]).map(toStepLog);
  }

  async apply(changes: readonly S.Change[], options: S.ApplyOptions = {}): Promise<Applied> {
    if (changes.length === 0) return appliedAttempts(changes);
    return this.#applyTx(changes, options.owner, options.returning ?? false);
  }

  async claimDue(options: S.ClaimOptions): Promise<S.Run[]> {
    // Most claims find nothing (one follows the end of every drive): a read first, so that those
    // take no write lock. A run that falls due just after it is the next claim's, as it would be
    // had this claim run a moment earlier.
    if (options.limit < 1 || this.#s.anyDue.get({ now: options.now }) === undefined) return [];
    const { runs, waiting } = this.#claimDueTx(options);
    if (waiting.length > 0) options.onWaiting?.(waiting);
    return runs;
  }

  async release(runId: string, owner: string): Promise<void> {
    this.#s.release.run({ runId, owner });
  }

  async renew(runIds: readonly string[], owner: string, until: number): Promise<void> {
    if (runIds.length > 0) this.#renewTx(runIds, owner, until);
  }

  async deliverEvent(input: {
    eventId: string;
    data: string;
    output: string;
    now: number;
    keepUntil: number;
  }): Promise<string[]> {
    return this.#deliverTx(input);
  }

  async takeEvent(eventId: string, now: number): Promise<string | undefined> {
    return this.#takeEventTx(eventId, now);
  }

  async releaseAll(): Promise<void> {
    this.#s.releaseAll.run();
  }

  async stats(now: number): Promise<S.StoreStats> {
    const runs = Object.fromEntries(RUN_STATUSES.map((status) => [status, 0])) as Record<S.RunStatus, number>;
    for (const row of this.#s.countByStatus.all() as { status: S.RunStatus; n: number }[]) runs[row.status] = row.n;
    return { runs, due: this.#s.countDue.get({ now }) as number };
  }

  async nextDueAt(): Promise<number | null> {
    return (this.#s.nextDue.get() as number | null | undefined) ?? null;
  }

  /** Reads one pragma's value on this connection (for diagnostics and tests). */
  pragma(name: string): unknown {
    return this.#db.pragma(name, { simple: true });
  }

  /** The open database (for diagnostics and tests; the runner's parts use `connection`). */
  get database(): Database.Database {
    return this.#db;
  }

  async close(): Promise<void> {
    if (this.#db.open) this.#db.close();
  }
}

/**
 * Opens (creating if needed) a SQLite store and brings its schema up to date.
 *
 * @example
 * const store = openSqliteStore('.wf/dev.db');
 * const { run } = await store.createRun({ id, url, body: '{}', headers: {}, retries: 3, retryDelayMs: 1000, now: Date.now() });
 */
export function openSqliteStore(path: string): SqliteStore {
  return new SqliteStore(path);
}
