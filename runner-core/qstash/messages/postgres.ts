import type { Sql, TransactionSql } from 'postgres';
import { appliedAttempts } from '../../store/applied.js';
import type { FlowUsage } from '../../store/flow-admission.js';
import type { Applied, Change, StoreConnection } from '../../store/types.js';
import { deliveryInProgress, type DeliveryRef } from '../delivery/in-progress.js';
import { HOLD_PREFIX, holdOwner } from '../delivery/publish-hold.js';
import type * as M from './store.js';
import {
  admitMessages,
  DUE_COLUMNS,
  FLOW_LOOKAHEAD,
  flowParams,
  UNDELIVERED_WHERE,
  toInFlight,
  toMessage,
  toRunMessage,
  withinBytes,
  type DueRow,
  type InFlightRow,
  type MessageRow,
  type RunMessageRow,
} from './sqlite.js';

type Db = Sql<{ bigint: number }>;
type Tx = TransactionSql<{ bigint: number }>;

/**
 * The `MessageStore` on PostgreSQL, for several runners on one database. Most writes are one
 * statement (as the `Store`'s are), so no transaction waits on a client that froze; a claim takes
 * its messages `FOR UPDATE SKIP LOCKED`, so two runners never lease the same message. A claim and
 * a publish that settles a delivery are short transactions, bounded by their session settings.
 */
export class PostgresMessageStore implements M.MessageStore {
  readonly #sql: Db;
  readonly #connection: Extract<StoreConnection, { kind: 'postgres' }>;

  constructor(connection: Extract<StoreConnection, { kind: 'postgres' }>) {
    this.#sql = connection.sql;
    this.#connection = connection;
  }

  /**
   * A transaction that writes messages and the store's changes together. A runner that froze inside
   * it must not hold its rows and locks for long: the server ends such a session, and a statement
   * waiting on a lock gives up (the publish fails; the app publishes again).
   */
  #transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.#sql.begin(async (tx) => {
      await tx`SET LOCAL idle_in_transaction_session_timeout = '5s'`;
      await tx`SET LOCAL lock_timeout = '2s'`;
      return work(tx);
    }) as Promise<T>;
  }

  /**
   * Settles the deliveries the app published during (../delivery/in-progress.ts), whoever holds their
   * lease; `published` are the messages this publish stored, which no delivery ran yet.
   */
  async #settleDuring(
    tx: Tx,
    during: readonly DeliveryRef[],
    published: ReadonlySet<string>,
    now: number,
  ): Promise<number> {
    let held = 0;
    for (const { runId, step } of during) {
      const rows = await tx<
        InFlightRow[]
      >`SELECT id, seq, call_type, spec FROM qstash_messages WHERE run_id = ${runId} AND ${tx.unsafe(UNDELIVERED_WHERE)} FOR UPDATE`;
      const id = deliveryInProgress(rows.filter((row) => !published.has(row.id)).map(toInFlight), step);
      if (id === undefined) continue;
      // The run's fresh messages wait for this delivery's answer (publish-hold.ts); its row is locked above.
      if (published.size > 0) {
        held += (
          await tx`UPDATE qstash_messages m SET lease_owner = ${holdOwner(id)}, lease_until = d.lease_until
          FROM qstash_messages d
          WHERE d.id = ${id} AND d.lease_owner IS NOT NULL AND d.lease_until >= ${now}::bigint
            AND m.run_id = ${runId} AND m.status = 'pending' AND m.lease_owner IS NULL
            AND m.id = ANY(${[...published]})`
        ).count;
      }
      await tx`UPDATE qstash_messages SET status = 'delivered', unreachable_since = NULL, lease_owner = NULL, lease_until = NULL,
        updated_at = ${now}::bigint WHERE id = ${id} AND status = 'pending'`;
    }
    return held;
  }

  /**
   * Holds `published` behind each run's delivery in progress (publish-hold.ts), unsettled. Its row is
   * locked to the commit: the worker's settle waits for it, so its release after the settle sees the hold.
   */
  async #holdBehind(tx: Tx, runIds: readonly string[], published: readonly string[], now: number): Promise<void> {
    for (const runId of runIds) {
      const [delivery] = await tx<{ id: string }[]>`SELECT id FROM qstash_messages
        WHERE run_id = ${runId} AND ${tx.unsafe(UNDELIVERED_WHERE)} AND lease_owner IS NOT NULL
          AND lease_owner NOT LIKE ${`${HOLD_PREFIX}%`} AND lease_until >= ${now}::bigint
        ORDER BY seq DESC LIMIT 1 FOR UPDATE`;
      if (!delivery) continue;
      await tx`UPDATE qstash_messages m SET lease_owner = ${holdOwner(delivery.id)}, lease_until = d.lease_until
        FROM qstash_messages d
        WHERE d.id = ${delivery.id} AND m.run_id = ${runId} AND m.status = 'pending' AND m.lease_owner IS NULL
          AND m.id = ANY(${published as string[]})`;
    }
  }

  async createRun(
    run: M.NewUpstashRun,
    first: M.NewMessage,
    alongside?: M.PublishOptions & { changes: readonly Change[] },
  ): Promise<{ created: boolean; applied: Applied }> {
    if (!alongside) return { created: await this.#createRun(this.#sql, run, first), applied: appliedAttempts([]) };
    return this.#transaction(async (tx) => {
      if (!(await this.#createRun(tx, run, first))) return { created: false, applied: appliedAttempts([]) };
      await this.#settleDuring(tx, alongside.during ?? [], new Set(), alongside.now);
      return { created: true, applied: await this.#connection.apply(tx, alongside.changes, alongside.returning) };
    });
  }

  async publish(messages: readonly M.PublishedMessage[], options: M.PublishOptions): Promise<M.StoredPublish> {
    if (messages.length === 0) return { results: [], applied: appliedAttempts([]), held: 0 };
    return this.#transaction(async (tx) => {
      const results = await this.#insert(
        tx,
        messages.map((m) => m.message),
      );
      const fresh = messages.filter((_, i) => !results[i]!.deduplicated);
      const runs = new Set(fresh.map((m) => m.message.runId));
      const held = await this.#settleDuring(
        tx,
        (options.during ?? []).filter((ref) => runs.has(ref.runId)),
        new Set(messages.map((m) => m.message.id)),
        options.now,
      );
      const behind = (options.behind ?? []).filter((runId) => runs.has(runId));
      if (behind.length > 0)
        await this.#holdBehind(
          tx,
          behind,
          fresh.map((m) => m.message.id),
          options.now,
        );
      return {
        results,
        held,
        applied: await this.#connection.apply(
          tx,
          fresh.flatMap((m) => m.changes),
          options.returning,
        ),
      };
    });
  }

  async #createRun(sql: Db | Tx, run: M.NewUpstashRun, first: M.NewMessage): Promise<boolean> {
    const flow = flowParams(first);
    // Parent and children in one statement: the foreign keys are checked at its end.
    const [row] = await sql<{ n: number }[]>`WITH r AS (
        INSERT INTO runs (id, url, status, body, headers, created_at, updated_at, next_at, retries, retry_delay_ms, idempotency_key, protocol)
        VALUES (${run.id}, ${run.url}, 'running', ${run.body}, ${JSON.stringify(run.headers)}, ${run.now}::bigint, ${run.now}::bigint, NULL,
          ${run.retries}, ${run.retryDelayMs}::bigint, ${run.idempotencyKey}, 'upstash')
        ON CONFLICT DO NOTHING RETURNING id),
      c AS (INSERT INTO qstash_runs (run_id, config) SELECT id, ${run.config} FROM r),
      m AS (INSERT INTO qstash_messages (id, run_id, call_type, kind, spec, status, due_at, dedup_key,
          flow_key, flow_parallelism, flow_rate, flow_period_ms, created_at, updated_at)
        SELECT ${first.id}, id, ${first.callType}, ${first.kind}, ${JSON.stringify(first.spec)}, ${first.delivered ? 'delivered' : 'pending'}, ${first.dueAt}::bigint,
          ${first.dedupKey}, ${flow.flowKey}, ${flow.flowParallelism}::int, ${flow.flowRate}::int, ${flow.flowPeriodMs}::bigint,
          ${first.now}::bigint, ${first.now}::bigint FROM r)
      SELECT COUNT(*)::int AS n FROM r`;
    return (row?.n ?? 0) > 0;
  }

  async runConfig(runId: string): Promise<string | undefined> {
    const [row] = await this.#sql<{ config: string }[]>`SELECT config FROM qstash_runs WHERE run_id = ${runId}`;
    return row?.config;
  }

  async insertMessages(messages: readonly M.NewMessage[]): Promise<{ id: string; deduplicated: boolean }[]> {
    return messages.length === 0 ? [] : this.#insert(this.#sql, messages);
  }

  async #insert(sql: Db | Tx, messages: readonly M.NewMessage[]): Promise<{ id: string; deduplicated: boolean }[]> {
    const rows = messages.map((m) => ({
      id: m.id,
      run_id: m.runId,
      call_type: m.callType,
      kind: m.kind,
      spec: JSON.stringify(m.spec),
      status: m.delivered ? 'delivered' : 'pending',
      due_at: m.dueAt,
      dedup_key: m.dedupKey,
      flow_key: m.flow?.key ?? null,
      flow_parallelism: m.flow?.parallelism ?? null,
      flow_rate: m.flow?.rate ?? null,
      flow_period_ms: m.flow?.periodMs ?? null,
      now: m.now,
      ord: 0,
    }));
    for (const [index, row] of rows.entries()) row.ord = index;
    const json = JSON.stringify(rows);
    // ORDER BY ord: seq follows the batch's order, as a run's message list must. `locked` takes a
    // lock per run (in id order) before any row gets its seq, held to the commit: two publishes for
    // one run then commit in seq order, so a delivery's "messages up to mine" never misses a lower
    // seq committed later (which could leave a parallel group without its "last" delivery).
    const inserted = await sql<{ id: string }[]>`WITH locked AS (
        SELECT COUNT(pg_advisory_xact_lock(hashtext('wfkit qstash run ' || r))) AS n
        FROM (SELECT DISTINCT run_id AS r FROM json_to_recordset(${json}::text::json) AS y(run_id text) WHERE run_id IS NOT NULL ORDER BY 1) ids)
      INSERT INTO qstash_messages (id, run_id, call_type, kind, spec, status, due_at, dedup_key,
        flow_key, flow_parallelism, flow_rate, flow_period_ms, created_at, updated_at)
      SELECT id, run_id, call_type, kind, spec, status, due_at, dedup_key, flow_key, flow_parallelism, flow_rate, flow_period_ms, now, now
      FROM json_to_recordset(${json}::text::json) AS x(id text, run_id text, call_type text, kind text, spec text, status text, due_at bigint,
        dedup_key text, flow_key text, flow_parallelism int, flow_rate int, flow_period_ms bigint, now bigint, ord int), locked ORDER BY ord
      ON CONFLICT (dedup_key) DO NOTHING RETURNING id`;
    const fresh = new Set(inserted.map((row) => row.id));
    const out: { id: string; deduplicated: boolean }[] = [];
    for (const m of messages) {
      if (fresh.has(m.id)) out.push({ id: m.id, deduplicated: false });
      else {
        const [existing] = await sql<{ id: string }[]>`SELECT id FROM qstash_messages WHERE dedup_key = ${m.dedupKey}`;
        out.push({ id: existing?.id ?? m.id, deduplicated: true });
      }
    }
    return out;
  }

  /**
   * One transaction: the due rows `FOR UPDATE SKIP LOCKED` (two claimers never take the same), then,
   * when some have a flow key, a transaction-scoped advisory lock per key (in key order, so two
   * claimers never deadlock) before counting what the key uses, as the runs' flow claim does
   * (store/postgres-flow-claim.ts): a second claimer's counts then see the first one's leases.
   * The only multi-statement transaction of the QStash store, bounded by its session settings.
   */
  async claimDue({
    now,
    limit,
    owner,
    leaseMs,
    maxBytes,
    atLeastOne,
  }: M.MessageClaimOptions): Promise<M.StoredMessage[]> {
    const take = Math.max(0, Math.trunc(limit));
    if (take === 0) return [];
    // Most polls find nothing due (a runner with no Upstash app polls all the same): a plain read
    // answers them, so an idle worker opens no transaction. Besides the round trips, that keeps a
    // runner frozen past the idle limit below (SIGSTOP, a long pause) from having its session ended
    // mid-transaction for nothing: postgres.js 3.4.9 can then crash the process writing to the
    // closed socket (porsager/postgres#1208).
    const [due] = await this.#sql<{ due: number }[]>`SELECT 1 AS due FROM qstash_messages WHERE status = 'pending'
      AND due_at <= ${now}::bigint AND (lease_until IS NULL OR lease_until < ${now}::bigint) LIMIT 1`;
    if (due === undefined) return [];
    const claimed = await this.#sql.begin(async (tx) => {
      // A runner that froze inside this transaction must not hold its rows and key locks for long: the
      // server ends such a session, and a claimer waiting on a key lock gives up and polls again.
      await tx`SET LOCAL idle_in_transaction_session_timeout = '5s'`;
      await tx`SET LOCAL lock_timeout = '2s'`;
      // octet_length reads a stored body's size from its header, not the body.
      const due = await tx<
        DueRow[]
      >`SELECT ${tx.unsafe(DUE_COLUMNS)}, octet_length(spec) AS spec_bytes FROM qstash_messages
        WHERE status = 'pending' AND due_at <= ${now}::bigint AND (lease_until IS NULL OR lease_until < ${now}::bigint)
        ORDER BY due_at LIMIT ${take * 2 + FLOW_LOOKAHEAD} FOR UPDATE SKIP LOCKED`;
      const rows = withinBytes(due, maxBytes ?? Number.POSITIVE_INFINITY, atLeastOne ?? true);
      const keys = [...new Set(rows.map((row) => row.flow_key).filter((key): key is string => key !== null))].sort();
      const usage = new Map<string, FlowUsage>();
      for (const key of keys) {
        await tx`SELECT pg_advisory_xact_lock(hashtext(${`wfkit qstash flow ${key}`}))`;
        const periodMs = Number(rows.find((row) => row.flow_key === key)?.flow_period_ms ?? 1000);
        const [counts] = await tx<{ executing: number; started: number; oldest: number | null }[]>`SELECT
            (SELECT COUNT(*)::int FROM qstash_messages WHERE flow_key = ${key} AND status = 'pending' AND lease_owner IS NOT NULL
              AND lease_until >= ${now}::bigint) AS executing,
            COUNT(*)::int AS started, MIN(flow_started_at) AS oldest
          FROM qstash_messages WHERE flow_key = ${key} AND flow_started_at > ${now - periodMs}::bigint`;
        usage.set(key, {
          executing: counts?.executing ?? 0,
          startedInPeriod: counts?.started ?? 0,
          oldestStart: counts?.oldest === null || counts?.oldest === undefined ? null : Number(counts.oldest),
        });
      }
      const { admitted, parked } = admitMessages(rows, take, now, (key) => usage.get(key)!);
      const ids = admitted.map((row) => row.id);
      const specs =
        ids.length === 0
          ? []
          : await tx<{ id: string; spec: string }[]>`UPDATE qstash_messages SET lease_owner = ${owner},
              lease_until = ${now + leaseMs}::bigint, flow_started_at = CASE WHEN flow_key IS NULL THEN NULL ELSE ${now}::bigint END
            WHERE id = ANY(${ids}) RETURNING id, spec`;
      for (const wait of parked)
        await tx`UPDATE qstash_messages SET due_at = ${wait.until}::bigint WHERE id = ${wait.id}`;
      const spec = new Map(specs.map((row) => [row.id, row.spec]));
      return admitted.map((row) => ({ ...row, spec: spec.get(row.id)! }));
    });
    return claimed.map(toMessage);
  }

  async renew(ids: readonly string[], owner: string, until: number): Promise<void> {
    if (ids.length === 0) return;
    await this
      .#sql`UPDATE qstash_messages SET lease_until = ${until}::bigint WHERE id = ANY(${ids as string[]}) AND lease_owner = ${owner}`;
    await this.#sql`UPDATE qstash_messages SET lease_until = ${until}::bigint
      WHERE status = 'pending' AND lease_owner = ANY(${ids.map(holdOwner)})`;
  }

  async releaseHeld(runId: string, deliveryId: string): Promise<number> {
    const rows = await this.#sql`UPDATE qstash_messages SET lease_owner = NULL, lease_until = NULL
      WHERE run_id = ${runId} AND status = 'pending' AND lease_owner = ${holdOwner(deliveryId)} RETURNING id`;
    return rows.length;
  }

  async takeHeld(
    runId: string,
    deliveryId: string,
    take: M.HeldTake,
  ): Promise<{ taken: M.StoredMessage[]; released: number }> {
    const hold = holdOwner(deliveryId);
    return this.#sql.begin(async (tx) => {
      const due =
        take.limit <= 0
          ? []
          : await tx<DueRow[]>`SELECT ${tx.unsafe(DUE_COLUMNS)}, octet_length(spec) AS spec_bytes FROM qstash_messages
            WHERE run_id = ${runId} AND status = 'pending' AND lease_owner = ${hold} AND flow_key IS NULL
              AND due_at <= ${take.now}::bigint
            ORDER BY seq LIMIT ${Math.trunc(take.limit)} FOR UPDATE`;
      const ids = withinBytes(due, take.maxBytes, take.atLeastOne).map((row) => row.id);
      const specs =
        ids.length === 0
          ? []
          : await tx<{ id: string; spec: string }[]>`UPDATE qstash_messages SET lease_owner = ${take.owner},
              lease_until = ${take.until}::bigint WHERE id = ANY(${ids}) RETURNING id, spec`;
      const spec = new Map(specs.map((row) => [row.id, row.spec]));
      const taken = due.filter((row) => spec.has(row.id)).map((row) => toMessage({ ...row, spec: spec.get(row.id)! }));
      const released = await tx`UPDATE qstash_messages SET lease_owner = NULL, lease_until = NULL
        WHERE run_id = ${runId} AND status = 'pending' AND lease_owner = ${hold} RETURNING id`;
      return { taken, released: released.length };
    });
  }

  async settle(id: string, owner: string, patch: M.MessagePatch, now: number): Promise<boolean> {
    const sql = this.#sql;
    const unreachable =
      patch.unreachableSince === undefined
        ? sql`unreachable_since`
        : sql`${patch.unreachableSince === null ? null : Math.round(patch.unreachableSince)}::bigint`;
    const rows =
      await sql`UPDATE qstash_messages SET status = ${patch.status}, due_at = COALESCE(${patch.dueAt === undefined ? null : Math.round(patch.dueAt)}::bigint, due_at),
        retried = COALESCE(${patch.retried ?? null}::int, retried), unreachable_since = ${unreachable},
        lease_owner = NULL, lease_until = NULL, updated_at = ${now}::bigint
      WHERE id = ${id} AND lease_owner = ${owner} RETURNING id`;
    return rows.length > 0;
  }

  async logDelivery(): Promise<undefined> {
    return undefined;
  }

  async runMessages(runId: string, upToSeq: number = Number.MAX_SAFE_INTEGER, afterSeq = 0): Promise<M.RunMessage[]> {
    const rows = await this.#sql<
      RunMessageRow[]
    >`SELECT id, seq, call_type, spec::json->>'body' AS body, status, retried,
      created_at FROM qstash_messages WHERE run_id = ${runId} AND seq > ${afterSeq}::bigint
      AND seq <= ${upToSeq}::bigint ORDER BY seq`;
    return rows.map(toRunMessage);
  }

  async runsByStart(after: M.RunStart | undefined, limit: number): Promise<M.RunStart[]> {
    const rows = after
      ? await this.#sql<{ id: string; created_at: string }[]>`SELECT id, created_at FROM runs WHERE protocol = 'upstash'
          AND (created_at, id) < (${after.createdAt}::bigint, ${after.id})
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`
      : await this.#sql<{ id: string; created_at: string }[]>`SELECT id, created_at FROM runs WHERE protocol = 'upstash'
          ORDER BY created_at DESC, id DESC LIMIT ${limit}`;
    return rows.map((row) => ({ id: row.id, createdAt: Number(row.created_at) }));
  }

  async deadLetters(query: M.DeadLetterQuery): Promise<M.DeadLetter[]> {
    const sql = this.#sql;
    const ofRun = query.runId === undefined ? sql`` : sql`AND run_id = ${query.runId}`;
    const ofIds = query.ids === undefined ? sql`` : sql`AND id = ANY(${query.ids as string[]})`;
    const beforeSeq = query.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const rows = await sql<(MessageRow & { updated_at: string })[]>`SELECT * FROM qstash_messages
      WHERE status = 'failed' AND run_id IS NOT NULL AND seq < ${beforeSeq}::bigint ${ofRun} ${ofIds}
      ORDER BY seq DESC LIMIT ${query.limit}`;
    return rows.map((row) => ({ ...toMessage(row), failedAt: Number(row.updated_at) }));
  }

  async storedMessages(runId: string): Promise<M.StoredMessage[]> {
    const rows = await this.#sql<MessageRow[]>`SELECT * FROM qstash_messages WHERE run_id = ${runId} ORDER BY seq`;
    return rows.map(toMessage);
  }

  async deleteDeadLetters(ids: readonly string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const rows = await this.#sql`DELETE FROM qstash_messages WHERE status = 'failed' AND run_id IS NOT NULL
      AND id = ANY(${ids as string[]}) RETURNING id`;
    return rows.length;
  }

  async cancelPending(runId: string, now: number): Promise<number> {
    const rows = await this.#sql`UPDATE qstash_messages SET status = 'cancelled', updated_at = ${now}::bigint
      WHERE run_id = ${runId} AND status = 'pending' AND (call_type IS NULL OR call_type != 'failureCall') RETURNING id`;
    return rows.length;
  }

  async nextAttemptSeq(runId: string, now: number): Promise<number> {
    const [row] = await this.#sql<
      { attempts: number }[]
    >`UPDATE runs SET attempts = attempts + 1, updated_at = ${now}::bigint
      WHERE id = ${runId} RETURNING attempts`;
    if (!row) throw new Error(`Expected run ${runId} to exist for an attempt, but it was not found.`);
    return row.attempts;
  }

  async nextDueAt(): Promise<number | null> {
    const [row] = await this.#sql<{ at: number | null }[]>`SELECT MIN(GREATEST(due_at, COALESCE(lease_until, 0))) AS at
      FROM qstash_messages WHERE status = 'pending'`;
    return row?.at === null || row?.at === undefined ? null : Number(row.at);
  }

  async releaseAll(): Promise<void> {
    throw new Error('releaseAll is for a store one runner owns (SQLite); a shared PostgreSQL store keeps its leases.');
  }

  /** One statement: the runs that still owe a message are read and left alone in the same snapshot as the deletes. */
  async pruneRuns(
    runIds: readonly string[],
    { dryRun }: { dryRun: boolean },
  ): Promise<{ kept: string[]; messages: number }> {
    if (runIds.length === 0) return { kept: [], messages: 0 };
    const sql = this.#sql;
    const ids = [...runIds];
    const owed = sql`SELECT DISTINCT run_id FROM qstash_messages WHERE run_id = ANY(${ids}::text[]) AND status = 'pending'`;
    const [row] = dryRun
      ? await sql<{ kept: string[]; messages: number }[]>`WITH owed AS (${owed})
          SELECT COALESCE((SELECT array_agg(run_id) FROM owed), '{}') AS kept,
            (SELECT COUNT(*) FROM qstash_messages WHERE run_id = ANY(${ids}::text[]) AND run_id NOT IN (SELECT run_id FROM owed))::int AS messages`
      : await sql<{ kept: string[]; messages: number }[]>`WITH owed AS (${owed}),
          m AS (DELETE FROM qstash_messages WHERE run_id = ANY(${ids}::text[]) AND run_id NOT IN (SELECT run_id FROM owed) RETURNING 1),
          c AS (DELETE FROM qstash_runs WHERE run_id = ANY(${ids}::text[]) AND run_id NOT IN (SELECT run_id FROM owed))
          SELECT COALESCE((SELECT array_agg(run_id) FROM owed), '{}') AS kept, (SELECT COUNT(*) FROM m)::int AS messages`;
    return { kept: row?.kept ?? [], messages: row?.messages ?? 0 };
  }

  async pruneSettled({ before, limit, dryRun }: { before: number; limit: number; dryRun: boolean }): Promise<number> {
    const sql = this.#sql;
    const take = Math.max(0, Math.trunc(limit));
    const settled = sql`SELECT seq FROM qstash_messages WHERE run_id IS NULL AND status != 'pending' AND updated_at < ${before}::bigint
      ORDER BY updated_at LIMIT ${take}`;
    const [row] = dryRun
      ? await sql<{ n: number }[]>`SELECT COUNT(*)::int AS n FROM (${settled}) s`
      : await sql<
          { n: number }[]
        >`WITH d AS (DELETE FROM qstash_messages WHERE seq IN (${settled} FOR UPDATE SKIP LOCKED) RETURNING 1)
          SELECT COUNT(*)::int AS n FROM d`;
    return row?.n ?? 0;
  }
}
