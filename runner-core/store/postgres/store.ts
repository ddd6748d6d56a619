import { runListSql } from '../run-list-sql.js';
import { PostgresSchedules } from './schedules.js';
import { PostgresRetention } from './retention.js';
import type { Fragment, Options, PostgresType, Row, Sql, TransactionSql } from 'postgres';
import { appliedAttempts, readApplied, touchedBy, type Applied, type Touched } from '../applied.js';
import { LeaseLostError } from '../errors.js';
import { CLAIMABLE } from '../claimable.js';
import { RESUMABLE, RESUME_CLEARS } from '../resume.js';
import { changeRow, ms } from './changes.js';
import { claimFlowRuns } from './flow-claim.js';
import { eventLockKey, type DeliverEventInput } from './events.js';
import { migratePostgres } from '../migrations/postgres.js';
import { pageLimit, toAttempt, toRun, toRunPage, toStep, type AttemptRow, type RunRow, type StepRow } from '../rows.js';
import { stepLogParams, toStepLog, type StepLogRow } from '../step-log-rows.js';
import { RUN_STATUSES } from '../types.js';
import type * as S from '../types.js';

/*
 * The client is `postgres` (porsager/postgres.js), not `pg`: it has no dependencies (pg pulls in
 * pg-pool, pg-protocol, pg-types and more), is ESM-native with its types in the package, prepares
 * each statement once per connection and pipelines queries issued together (the store's reads and
 * claims from many drives). Tagged templates make every value a bound parameter. Every write is one
 * statement calling a server-side function (functions.ts), so no transaction is left open
 * across round trips. It is loaded lazily (see `openPostgresStore`), so SQLite users never load it.
 */

export interface PostgresStoreOptions {
  /** The PostgreSQL schema that holds wfkit's tables; created when missing. @default 'wfkit' */
  schema?: string;
  /**
   * Whose clock times the leases. `'database'`: the server's (`now()`), so runners on machines whose
   * clocks disagree still agree on when a lease ends: a runner whose clock runs ahead cannot take a
   * live lease. `'caller'`: the `now` each method is given, exactly like SQLite (tests inject time).
   * Either way `nextAt` (retries, sleeps) is compared with the caller's `now`: those are durations a
   * runner scheduled from its own clock, where a skew of a few seconds only shifts a wake-up.
   * @default 'database'
   */
  leaseClock?: 'database' | 'caller';
  /** Connections in the pool. @default 10 */
  max?: number;
  /** Seconds to wait for a connection before a query fails. @default 10 */
  connectTimeoutSeconds?: number;
}

/**
 * What `apply`'s first statement raises (functions.ts) as the store's errors: WFL01, a
 * lost lease, as `LeaseLostError`; WFL02, a patch of an unknown run, as a plain error.
 */
function storeError(error: unknown, owner: string | undefined): unknown {
  const e = error as { code?: unknown; detail?: unknown; message?: unknown };
  if (e.code === 'WFL01' && owner !== undefined && typeof e.detail === 'string') {
    const { runId, holder } = JSON.parse(e.detail) as { runId: string; holder: string | null };
    return new LeaseLostError(runId, owner, holder);
  }
  if (e.code === 'WFL02' && typeof e.message === 'string') return new Error(e.message, { cause: error });
  return error;
}

function checkSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(
      `Expected the PostgreSQL schema name to be lowercase letters, digits and _ (at most 63), got "${schema}".`,
    );
  }
  return schema;
}

/** BIGINT (epoch ms, counts) as a JavaScript number: every value we store is far below 2^53. */
const bigintAsNumber: PostgresType<number> = {
  to: 20,
  from: [20],
  serialize: (value: number) => String(value),
  parse: (value: string) => Number(value),
};

/**
 * The `Store` for several runner processes on one PostgreSQL database. Work is claimed with
 * `FOR UPDATE SKIP LOCKED` and a lease; every fenced `apply` locks the runs it touches and checks
 * their lease holder before it commits, so a runner that lost a run's lease cannot commit to it.
 */
export class PostgresStore implements S.Store {
  readonly #sql: Sql<{ bigint: number }>;
  readonly schedules: PostgresSchedules;
  readonly connection: S.StoreConnection;
  readonly retention: PostgresRetention;
  readonly #databaseClock: boolean;
  readonly #schema: string;

  constructor(sql: Sql<{ bigint: number }>, options: { schema: string; leaseClock: 'database' | 'caller' }) {
    this.#sql = sql;
    this.schedules = new PostgresSchedules(sql);
    this.connection = {
      kind: 'postgres',
      sql,
      apply: (tx, changes, returning) => this.#apply(tx, changes, undefined, returning),
    };
    this.#schema = options.schema;
    this.retention = new PostgresRetention(sql, options.schema);
    this.#databaseClock = options.leaseClock === 'database';
  }

  /** The database's clock, in epoch ms (transaction time, so one value throughout a statement). */
  #dbNow(): Fragment {
    return this.#sql`(floor(extract(epoch from now()) * 1000))::bigint`;
  }

  /** "Now" for lease comparisons: the database's, or the caller's. */
  #leaseNow(now: number): Fragment {
    return this.#databaseClock ? this.#dbNow() : this.#sql`${ms(now)}::bigint`;
  }

  /** When a lease of `leaseMs` taken now ends. */
  #leaseEnd(now: number, leaseMs: number): Fragment {
    return this.#databaseClock
      ? this.#sql`(${this.#dbNow()} + ${ms(leaseMs)}::bigint)`
      : this.#sql`${ms(now + leaseMs)}::bigint`;
  }

  /**
   * One statement (one transaction, one round trip) for the whole group of starts: a group commit,
   * so the runners and the server pay one statement and one commit per batch of starts, not per
   * start. A repeated key conflicts and inserts nothing (waiting for a concurrent insert of the same
   * key to commit first), then the existing run is read: no check-then-insert race (two inputs with
   * one new key: one creates, the other finds it). When the statement fails
   * (a repeated id), nothing of it was written and each input is created alone, so one bad input
   * fails by itself.
   */
  async createRuns(inputs: readonly S.NewRun[]): Promise<PromiseSettledResult<S.CreatedRun>[]> {
    if (inputs.length === 0) return [];
    let created: RunRow[];
    let byKey: Promise<Map<string | null, S.Run>> | undefined;
    try {
      created = await this.#insertAll(inputs);
    } catch (error) {
      if (inputs.length === 1) return [{ status: 'rejected', reason: error }];
      return Promise.allSettled(inputs.map((input) => this.createRun(input)));
    }
    const byId = new Map(created.map((row) => [row.id, toRun(row)]));
    const missingKeys = inputs.filter((input) => !byId.has(input.id)).map((input) => input.idempotencyKey ?? null);
    return Promise.allSettled(
      inputs.map(async (input) => {
        const run = byId.get(input.id);
        if (run) return { run, created: true };
        const found = (await (byKey ??= this.#runsByKey(missingKeys))).get(input.idempotencyKey ?? null);
        if (!found)
          throw new Error(
            `Expected a run with idempotency key "${input.idempotencyKey}" after a conflict on it, but found none.`,
          );
        return { run: found, created: false };
      }),
    );
  }

  /** The runs holding these idempotency keys, by key (one query for all the conflicts of a batch). */
  async #runsByKey(keys: readonly (string | null)[]): Promise<Map<string | null, S.Run>> {
    const rows = await this.#sql<RunRow[]>`SELECT * FROM runs WHERE idempotency_key = ANY(${keys as string[]}::text[])`;
    return new Map(rows.map((row) => [row.idempotency_key, toRun(row)]));
  }

  /** Inserts every input that has no run with its key yet; returns the inserted rows. */
  async #insertAll(inputs: readonly S.NewRun[]): Promise<RunRow[]> {
    const sql = this.#sql;
    const rows = JSON.stringify(
      inputs.map((input) => ({
        id: input.id,
        url: input.url,
        body: input.body,
        headers: JSON.stringify(input.headers),
        created_at: ms(input.now),
        next_at: ms(input.now + (input.delayMs ?? 0)),
        retries: input.retries,
        retry_delay_ms: ms(input.retryDelayMs),
        idempotency_key: input.idempotencyKey ?? null,
        lease_owner: input.lease?.owner ?? null,
        lease_ms: input.lease ? ms(input.lease.until - input.now) : null,
        lease_until: input.lease ? ms(input.lease.until) : null,
        flow_key: input.flowControl?.key ?? null,
        flow_parallelism: input.flowControl?.parallelism ?? null,
        flow_rate: input.flowControl?.rate ?? null,
        flow_period_ms: input.flowControl?.periodMs === undefined ? null : ms(input.flowControl.periodMs),
      })),
    );
    // A lease taken at insert ends as `createRun`'s does: on the database's clock, or the caller's.
    const leaseEnd = this.#databaseClock ? sql`${this.#dbNow()} + r.lease_ms` : sql`r.lease_until`;
    return sql<RunRow[]>`INSERT INTO runs (id, url, status, body, headers, created_at, updated_at,
        next_at, retries, retry_delay_ms, idempotency_key, lease_owner, lease_until, flow_key, flow_parallelism,
        flow_rate, flow_period_ms)
      SELECT r.id, r.url, CASE WHEN r.lease_owner IS NULL THEN 'queued' ELSE 'running' END, r.body, r.headers,
        r.created_at, r.created_at, r.next_at, r.retries, r.retry_delay_ms, r.idempotency_key, r.lease_owner,
        CASE WHEN r.lease_owner IS NULL THEN NULL ELSE ${leaseEnd} END, r.flow_key, r.flow_parallelism, r.flow_rate,
        r.flow_period_ms
      FROM jsonb_to_recordset(${rows}::text::jsonb) AS r(id TEXT, url TEXT, body TEXT, headers TEXT,
        created_at BIGINT, next_at BIGINT, retries INTEGER, retry_delay_ms BIGINT, idempotency_key TEXT,
        lease_owner TEXT, lease_ms BIGINT, lease_until BIGINT, flow_key TEXT, flow_parallelism INTEGER,
        flow_rate INTEGER, flow_period_ms BIGINT)
      ON CONFLICT (idempotency_key) DO NOTHING
      RETURNING *`;
  }

  async createRun(input: S.NewRun): Promise<S.CreatedRun> {
    const [result] = await this.createRuns([input]);
    if (result?.status !== 'fulfilled') throw result?.reason;
    return result.value;
  }

  async getRun(id: string): Promise<S.Run | undefined> {
    const [row] = await this.#sql<RunRow[]>`SELECT * FROM runs WHERE id = ${id}`;
    return row ? toRun(row) : undefined;
  }

  async listRuns(query: S.RunQuery): Promise<S.RunPage> {
    const limit = pageLimit(query.limit);
    const { text, params } = runListSql(query, limit + 1, 'postgres');
    // Not prepared: a prepared statement goes to a generic plan after five runs, and the best plan
    // of a search depends on its values (a rare status, a recent hour, a broad URL prefix).
    const rows = await this.#sql.unsafe<RunRow[]>(text, params as never[], { prepare: false });
    return toRunPage(rows, limit);
  }

  /** One statement (data-modifying CTEs), so one transaction; see `RunStore.resumeRun`. */
  async resumeRun(runId: string, now: number): Promise<{ run: S.Run; resumed: boolean } | undefined> {
    const sql = this.#sql;
    const [row] = await sql<(RunRow & { resumed: boolean })[]>`WITH resumed AS (
        UPDATE runs SET status = 'queued', next_at = ${ms(now)}, updated_at = ${ms(now)}, ${sql.unsafe(RESUME_CLEARS)}
        WHERE id = ${runId} AND ${sql.unsafe(RESUMABLE)}
        RETURNING *
      ), cleared AS (
        DELETE FROM steps WHERE run_id IN (SELECT id FROM resumed) AND status != 'succeeded'
      )
      SELECT resumed.*, true AS resumed FROM resumed
      UNION ALL
      SELECT runs.*, false AS resumed FROM runs WHERE id = ${runId} AND NOT EXISTS (SELECT 1 FROM resumed)`;
    if (!row) return undefined;
    const { resumed, ...run } = row;
    return { run: toRun(run as RunRow), resumed };
  }

  async listSteps(runId: string): Promise<S.Step[]> {
    return (await this.#sql<StepRow[]>`SELECT * FROM steps WHERE run_id = ${runId} ORDER BY idx`).map(toStep);
  }

  async listAttempts(runId: string): Promise<S.Attempt[]> {
    return (await this.#sql<AttemptRow[]>`SELECT * FROM attempts WHERE run_id = ${runId} ORDER BY seq`).map(toAttempt);
  }

  async listStepLogs(runId: string): Promise<S.StepLog[]> {
    return (await this.#sql<StepLogRow[]>`SELECT * FROM step_logs WHERE run_id = ${runId} ORDER BY idx, attempt`).map(
      toStepLog,
    );
  }

  /**
   * One statement, so one transaction that never waits on this process: `wfkit_apply`
   * (functions.ts) locks the touched runs in id order, checks the fence under those locks
   * and applies the changes in order. A lost lease raises before anything is written.
   */
  async apply(changes: readonly S.Change[], options: S.ApplyOptions = {}): Promise<Applied> {
    return this.#apply(this.#sql, changes, options.owner, options.returning ?? false);
  }

  /** `apply` on `sql`: the pool (one statement, its own transaction), or a transaction of a part of the runner (`connection`). */
  async #apply(
    sql: Sql<{ bigint: number }> | TransactionSql<{ bigint: number }>,
    changes: readonly S.Change[],
    owner: string | undefined,
    returning: boolean,
  ): Promise<Applied> {
    if (changes.length === 0) return appliedAttempts(changes);
    // Step logs have their own function (functions.ts), run in the same statement
    // after wfkit_apply (the materialized CTE is read first), only when a commit carries some.
    const logs = changes.filter((change) => change.type === 'step-logs');
    // Sent as text and cast: a parameter typed jsonb would be JSON-encoded a second time.
    const rows = JSON.stringify(
      (logs.length === 0 ? changes : changes.filter((change) => change.type !== 'step-logs')).map(changeRow),
    );
    try {
      if (logs.length === 0) await sql`SELECT wfkit_apply(${rows}::text::jsonb, ${owner ?? null}::text)`;
      else {
        const logRows = JSON.stringify(logs.map(stepLogParams));
        await sql`WITH applied AS MATERIALIZED (SELECT wfkit_apply(${rows}::text::jsonb, ${owner ?? null}::text))
          SELECT wfkit_apply_step_logs(${logRows}::text::jsonb, ${owner ?? null}::text) FROM applied`;
      }
    } catch (error) {
      throw storeError(error, owner);
    }
    if (!returning) return appliedAttempts(changes);
    return this.#readApplied(sql, touchedBy(changes));
  }

  /**
   * What an apply touched, read right after it (every write is one statement calling wfkit_apply,
   * so no transaction waits on this client): two queries, whatever the number of runs.
   */
  async #readApplied(
    sql: Sql<{ bigint: number }> | TransactionSql<{ bigint: number }>,
    touched: Touched,
  ): Promise<Applied> {
    const runIds = [...touched.runs];
    const stepRunIds = [...touched.steps.keys()];
    const [runs, steps] = await Promise.all([
      runIds.length === 0 ? [] : sql<RunRow[]>`SELECT * FROM runs WHERE id = ANY(${runIds}::text[])`,
      stepRunIds.length === 0
        ? []
        : sql<StepRow[]>`SELECT * FROM steps WHERE run_id = ANY(${stepRunIds}::text[]) ORDER BY run_id, idx`,
    ]);
    const byId = new Map(runs.map((row) => [row.id, toRun(row)]));
    const stepsOf = new Map<string, S.Step[]>();
    for (const row of steps) {
      const list = stepsOf.get(row.run_id) ?? [];
      stepsOf.set(row.run_id, [...list, toStep(row)]);
    }
    return readApplied(
      touched,
      (id) => byId.get(id),
      (runId) => stepsOf.get(runId) ?? [],
    );
  }

  async claimDue({ now, limit, owner, leaseMs, onWaiting }: S.ClaimOptions): Promise<S.Run[]> {
    const take = Math.max(0, Math.trunc(limit));
    if (take === 0) return [];
    const sql = this.#sql;
    // SKIP LOCKED: runners polling at once each take different rows instead of queueing on a lock.
    const rows = await sql<
      RunRow[]
    >`UPDATE runs SET lease_owner = ${owner}, lease_until = ${this.#leaseEnd(now, leaseMs)}
      WHERE id IN (
        SELECT id FROM runs
        WHERE ${sql.unsafe(CLAIMABLE)} AND next_at IS NOT NULL AND next_at <= ${ms(now)}
          AND (lease_until IS NULL OR lease_until < ${this.#leaseNow(now)}) AND flow_key IS NULL
        ORDER BY next_at LIMIT ${take}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING *`;
    // Flow-controlled runs are claimed apart, under their keys' locks (flow-claim.ts).
    if (rows.length < take) {
      const flow = await claimFlowRuns(sql, {
        now,
        take: take - rows.length,
        owner,
        leaseMs,
        databaseClock: this.#databaseClock,
      });
      rows.push(...flow.rows);
      if (flow.waiting.length > 0) onWaiting?.(flow.waiting);
    }
    // RETURNING has no order: oldest due first, like the SQLite store.
    return rows.map(toRun).sort((a, b) => (a.nextAt ?? 0) - (b.nextAt ?? 0) || (a.id < b.id ? -1 : 1));
  }

  async release(runId: string, owner: string): Promise<void> {
    await this
      .#sql`UPDATE runs SET lease_owner = NULL, lease_until = NULL WHERE id = ${runId} AND lease_owner = ${owner}`;
  }

  async renew(runIds: readonly string[], owner: string, until: number): Promise<void> {
    if (runIds.length === 0) return;
    // With the database's clock, `until` (the runner's now + its lease) becomes a duration from now.
    const end = this.#databaseClock ? this.#leaseEnd(0, until - Date.now()) : this.#sql`${ms(until)}::bigint`;
    await this.#sql`UPDATE runs SET lease_until = ${end} WHERE id = ANY(${[...runIds]}) AND lease_owner = ${owner}`;
  }

  /** `notify`, one statement: see `wfkit_deliver_event` for how it cannot miss a wait registered at the same moment. */
  async deliverEvent({ eventId, data, output, now, keepUntil }: DeliverEventInput): Promise<string[]> {
    const rows = await this.#sql<
      { id: string }[]
    >`SELECT wfkit_deliver_event(${eventLockKey(this.#schema, eventId)}, ${eventId}, ${data},
      ${output}, ${ms(now)}::bigint, ${ms(keepUntil)}::bigint) AS id`;
    return rows.map((row) => row.id);
  }

  async takeEvent(eventId: string, now: number): Promise<string | undefined> {
    const [row] = await this.#sql<
      { data: string | null }[]
    >`SELECT wfkit_take_event(${eventLockKey(this.#schema, eventId)}, ${eventId}, ${ms(now)}::bigint) AS data`;
    return row?.data ?? undefined;
  }

  /** Refused: on a store several runners share, clearing every lease would hand live runs to a second runner. */
  async releaseAll(): Promise<void> {
    throw new Error(
      'releaseAll() is not available on the PostgreSQL store: several runners share it, so leases end by expiry only (run the Runner with exclusive: false).',
    );
  }

  async stats(now: number): Promise<S.StoreStats> {
    const sql = this.#sql;
    const [byStatus, [due]] = await Promise.all([
      sql<{ status: S.RunStatus; n: number }[]>`SELECT status, count(*) AS n FROM runs GROUP BY status`,
      sql<
        { n: number }[]
      >`SELECT count(*) AS n FROM runs WHERE ${sql.unsafe(CLAIMABLE)} AND next_at IS NOT NULL AND next_at <= ${ms(now)}
        AND (lease_until IS NULL OR lease_until < ${this.#leaseNow(now)})`,
    ]);
    const runs = Object.fromEntries(RUN_STATUSES.map((status) => [status, 0])) as Record<S.RunStatus, number>;
    for (const row of byStatus) runs[row.status] = row.n;
    return { runs, due: due?.n ?? 0 };
  }

  async nextDueAt(): Promise<number | null> {
    const sql = this.#sql;
    // A leased run is not due before its lease runs out; a database-clock lease end is turned into
    // this machine's time, which the runner's scheduler timer counts in.
    const leaseEnd = this.#databaseClock
      ? sql`lease_until - ${this.#dbNow()} + ${Date.now()}::bigint`
      : sql`lease_until`;
    const [row] = await sql<
      { at: number | null }[]
    >`SELECT MIN(GREATEST(next_at, COALESCE(${leaseEnd}, 0), COALESCE(flow_wait_until, 0))) AS at
      FROM runs WHERE ${sql.unsafe(CLAIMABLE)} AND next_at IS NOT NULL`;
    return row?.at ?? null;
  }

  /** The connection pool (search_path = the store's schema), for parts with tables of their own in it (runner-core/qstash). */
  get sql(): Sql<{ bigint: number }> {
    return this.#sql;
  }

  /** Runs a query against the store's schema (for diagnostics and tests). */
  query<T extends readonly Row[]>(text: string, parameters: unknown[] = []): Promise<T> {
    return this.#sql.unsafe(text, parameters as never[]) as unknown as Promise<T>;
  }

  async close(): Promise<void> {
    await this.#sql.end({ timeout: 5 });
  }
}

/**
 * Connects to PostgreSQL, brings the schema up to date (once, even when many runners start at the
 * same moment) and returns the store. Loads the `postgres` package only now.
 *
 * @example
 * const store = await openPostgresStore('postgres://wf:secret@db.internal:5432/wf');
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
  const schema = checkSchemaName(options.schema ?? 'wfkit');
  const { default: postgres } = await import('postgres');
  const clientOptions: Options<{ bigint: PostgresType<number> }> = {
    max: options.max ?? 10,
    connect_timeout: options.connectTimeoutSeconds ?? 10,
    types: { bigint: bigintAsNumber },
    transform: { undefined: null },
    // CREATE … IF NOT EXISTS says "already exists, skipping" as a NOTICE on every start.
    onnotice: () => {},
    connection: {
      application_name: 'wfkit',
      search_path: schema,
      // The server notices a runner machine that vanished (power, network) in about 25 s, not the
      // kernel's 2 hours, and drops its connection. (No idle_in_transaction_session_timeout is
      // needed: a write is one statement, so our transactions never wait on the client.)
      tcp_keepalives_idle: 10,
      tcp_keepalives_interval: 5,
      tcp_keepalives_count: 3,
    },
  };
  const sql = postgres(url, clientOptions) as unknown as Sql<{ bigint: number }>;
  try {
    await migratePostgres(sql, schema);
  } catch (error) {
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
  return new PostgresStore(sql, { schema, leaseClock: options.leaseClock ?? 'database' });
}
