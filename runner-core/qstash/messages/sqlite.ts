import type { Database } from 'better-sqlite3';
import { appliedAttempts } from '../../store/applied.js';
import { admit, type FlowCandidate } from '../../store/flow-admission.js';
import { flowUsageReader } from '../../store/sqlite/flow-usage.js';
import type { Applied, Change, StoreConnection } from '../../store/types.js';
import { deliveryInProgress, type DeliveryRef, type InFlightMessage } from '../delivery/in-progress.js';
import { HOLD_PREFIX, holdOwner } from '../delivery/publish-hold.js';
import { HANDOVER_CALL_TYPE } from '../publish/handover.js';
import type * as M from './store.js';

/** The `MessageStore` on the runner's SQLite file: same connection, so one writer and WAL as the `Store`. */

export interface MessageRow {
  seq: number;
  id: string;
  run_id: string | null;
  call_type: string | null;
  kind: string;
  spec: string;
  status: string;
  due_at: number;
  retried: number;
  unreachable_since: number | null;
  created_at: number;
  flow_key: string | null;
  flow_parallelism: number | null;
  flow_rate: number | null;
  flow_period_ms: number | null;
}

export function toMessage(row: MessageRow): M.StoredMessage {
  return {
    id: row.id,
    seq: Number(row.seq),
    runId: row.run_id,
    callType: row.call_type,
    kind: row.kind as M.StoredMessage['kind'],
    spec: JSON.parse(row.spec) as M.StoredSpec,
    status: row.status as M.StoredMessage['status'],
    dueAt: Number(row.due_at),
    retried: row.retried,
    unreachableSince: row.unreachable_since === null ? null : Number(row.unreachable_since),
    createdAt: Number(row.created_at),
  };
}

/**
 * A run message's entry: its body as the SDK decodes it. The database takes the body out of the
 * stored spec (a delivery reads every message of its run, so the rest of each spec, headers and
 * all, is not parsed for it).
 */
export interface RunMessageRow {
  id: string;
  seq: number;
  call_type: string | null;
  body: string;
  status: string;
  retried: number;
  created_at: number;
}

export function toRunMessage(row: RunMessageRow): M.RunMessage {
  return {
    id: row.id,
    seq: Number(row.seq),
    callType: row.call_type,
    body: row.body,
    status: row.status as M.RunMessage['status'],
    retried: row.retried,
    createdAt: Number(row.created_at),
  };
}

/**
 * A due message as a claim first reads it: everything but its spec (the body, up to the message
 * size cap), with the spec's size. Only the claimed ones' specs are read, so a claim's memory is
 * bounded by its byte budget, not by its row limit times the largest body.
 */
export type DueRow = Omit<MessageRow, 'spec'> & { spec_bytes: number };

/** The columns of a `DueRow`; each dialect adds its spec-size expression. */
export const DUE_COLUMNS =
  'seq, id, run_id, call_type, kind, status, due_at, retried, unreachable_since, created_at, flow_key, flow_parallelism, flow_rate, flow_period_ms';

/**
 * The due rows, in order, whose specs fit in `maxBytes` together. A row that does not fit is
 * passed over (smaller ones after it still go), so one large message never holds the others back;
 * `atLeastOne` (nothing else in flight) lets a row larger than the whole budget go alone.
 */
export function withinBytes<T extends { spec_bytes: number }>(
  rows: readonly T[],
  maxBytes: number,
  atLeastOne: boolean,
): T[] {
  const fitting: T[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = Number(row.spec_bytes);
    if (bytes + size <= maxBytes || (atLeastOne && fitting.length === 0)) {
      fitting.push(row);
      bytes += size;
    }
  }
  return fitting;
}

/** Due rows read beyond a claim's limit, so messages of a full key do not starve the others. */
export const FLOW_LOOKAHEAD = 16;

export function flowParams(m: M.NewMessage) {
  return {
    flowKey: m.flow?.key ?? null,
    flowParallelism: m.flow?.parallelism ?? null,
    flowRate: m.flow?.rate ?? null,
    flowPeriodMs: m.flow?.periodMs ?? null,
  };
}

/**
 * Flow control of messages with the runs' admission (store/flow-admission.ts): parallelism counts
 * a key's messages being delivered; every delivery is a start for `rate` (QStash counts deliveries).
 */
/** A run's message in flight as stored, for `deliveryInProgress`. */
export interface InFlightRow {
  id: string;
  seq: number;
  call_type: string | null;
  spec: string;
}

export function toInFlight(row: InFlightRow): InFlightMessage {
  const spec = JSON.parse(row.spec) as M.StoredSpec;
  return { id: row.id, seq: Number(row.seq), callType: row.call_type, body: spec.body, headers: spec.headers };
}

/**
 * The run's messages to the workflow not yet delivered: the ones a publish may have been made
 * during. Leased or not: a runner that restarted on its SQLite file dropped the leases
 * (`releaseAll`) of the deliveries the app may still be answering.
 */
// A handover (handover.ts) is a delivery the app runs the first step during, as a step's is.
export const UNDELIVERED_WHERE = `status = 'pending' AND call_type IN ('step', 'fromCallback', '${HANDOVER_CALL_TYPE}')`;

export function admitMessages<Row extends DueRow>(
  rows: readonly Row[],
  take: number,
  now: number,
  usage: Parameters<typeof admit>[3],
) {
  const candidates = rows.map((row) => ({ ...row, flow_started_at: null }) as Row & FlowCandidate);
  return admit(candidates, take, now, usage);
}

type Alongside = M.PublishOptions & { changes: readonly Change[] };

/**
 * Runs `write` without waiting for the disk (`synchronous = NORMAL` for its commit, then the
 * connection's own level again): for the writes of leases and holds only. They guard against a
 * second runner sending a message at the same time, and an OS crash or power loss, the only thing
 * that loses an unsynced commit (a process crash loses nothing), ends every runner on this file with
 * it; a restart drops the leases anyway (`releaseAll`). A lost one is a message free to claim, as
 * its dead holder's would be. WAL keeps commits in order: the next synced commit (a publish, a
 * settle, the store's) makes it durable too, so nothing written after it is kept without it.
 */
function unsyncedWrites(db: Database): <T>(write: () => T) => T {
  const level = db.pragma('synchronous', { simple: true }) as number;
  const relaxed = db.prepare('PRAGMA synchronous = NORMAL');
  const restore = db.prepare(`PRAGMA synchronous = ${level}`);
  return (write) => {
    relaxed.run();
    try {
      return write();
    } finally {
      restore.run();
    }
  };
}

export class SqliteMessageStore implements M.MessageStore {
  readonly #db: Database;
  readonly #s;
  readonly #createRun: (
    run: M.NewUpstashRun,
    first: M.NewMessage,
    alongside: Alongside | undefined,
  ) => { created: boolean; applied: Applied };
  readonly #insert: (messages: readonly M.NewMessage[]) => { id: string; deduplicated: boolean }[];
  readonly #publish: (messages: readonly M.PublishedMessage[], options: M.PublishOptions) => M.StoredPublish;
  readonly #claim: (options: M.MessageClaimOptions) => M.StoredMessage[];
  readonly #renew: (ids: readonly string[], owner: string, until: number) => void;
  readonly #takeHeld: (
    runId: string,
    deliveryId: string,
    take: M.HeldTake,
  ) => { taken: M.StoredMessage[]; released: number };
  readonly #pruneRuns: (
    runIds: readonly string[],
    options: { dryRun: boolean },
  ) => { kept: string[]; messages: number };

  /** Lease and hold writes, committed without an fsync (`unsyncedWrites`). */
  readonly #unsynced: <T>(write: () => T) => T;
  /** The store's unfenced apply, in a transaction of its own (`logDelivery`). */
  readonly #apply: Extract<StoreConnection, { kind: 'sqlite' }>['apply'];

  constructor(connection: Extract<StoreConnection, { kind: 'sqlite' }>) {
    const { db } = connection;
    this.#db = db;
    const unsynced = unsyncedWrites(db);
    this.#unsynced = unsynced;
    this.#apply = connection.apply;
    const s = {
      insertRun:
        db.prepare(`INSERT INTO runs (id, url, status, body, headers, created_at, updated_at, next_at, retries, retry_delay_ms, idempotency_key, protocol)
        VALUES (@id, @url, 'running', @body, @headers, @now, @now, NULL, @retries, @retryDelayMs, @idempotencyKey, 'upstash') ON CONFLICT DO NOTHING`),
      insertConfig: db.prepare('INSERT INTO qstash_runs (run_id, config) VALUES (?, ?)'),
      config: db.prepare('SELECT config FROM qstash_runs WHERE run_id = ?').pluck(),
      insertMessage:
        db.prepare(`INSERT INTO qstash_messages (id, run_id, call_type, kind, spec, status, due_at, dedup_key,
          flow_key, flow_parallelism, flow_rate, flow_period_ms, created_at, updated_at)
        VALUES (@id, @runId, @callType, @kind, @spec, @status, @dueAt, @dedupKey, @flowKey, @flowParallelism, @flowRate, @flowPeriodMs, @now, @now)
        ON CONFLICT (dedup_key) DO NOTHING`),
      byDedup: db.prepare('SELECT id FROM qstash_messages WHERE dedup_key = ?').pluck(),
      due: db.prepare(`SELECT ${DUE_COLUMNS}, length(spec) AS spec_bytes FROM qstash_messages WHERE status = 'pending'
        AND due_at <= @now AND (lease_until IS NULL OR lease_until < @now) ORDER BY due_at LIMIT @limit`),
      anyDue: db
        .prepare(`SELECT 1 FROM qstash_messages WHERE status = 'pending' AND due_at <= @now
        AND (lease_until IS NULL OR lease_until < @now) LIMIT 1`)
        .pluck(),
      spec: db.prepare('SELECT spec FROM qstash_messages WHERE id = ?').pluck(),
      lease: db.prepare(`UPDATE qstash_messages SET lease_owner = @owner, lease_until = @until,
        flow_started_at = CASE WHEN flow_key IS NULL THEN NULL ELSE @now END WHERE id = @id`),
      park: db.prepare('UPDATE qstash_messages SET due_at = @until WHERE id = @id'),
      flowExecuting: db
        .prepare(`SELECT COUNT(*) FROM qstash_messages WHERE flow_key = @key AND status = 'pending'
        AND lease_owner IS NOT NULL AND lease_until >= @now`)
        .pluck(),
      flowStarted: db.prepare(
        'SELECT COUNT(*) AS n, MIN(flow_started_at) AS oldest FROM qstash_messages WHERE flow_key = @key AND flow_started_at > @since',
      ),
      renew: db.prepare('UPDATE qstash_messages SET lease_until = ? WHERE id = ? AND lease_owner = ?'),
      settle:
        db.prepare(`UPDATE qstash_messages SET status = @status, due_at = COALESCE(@dueAt, due_at), retried = COALESCE(@retried, retried),
          unreachable_since = CASE WHEN @setUnreachable = 1 THEN @unreachableSince ELSE unreachable_since END,
          lease_owner = NULL, lease_until = NULL, updated_at = @now
        WHERE id = @id AND lease_owner = @owner`),
      runMessages: db.prepare(
        `SELECT id, seq, call_type, json_extract(spec, '$.body') AS body, status, retried, created_at FROM qstash_messages
        WHERE run_id = ? AND seq > ? AND seq <= ? ORDER BY seq`,
      ),
      deadLetters: db.prepare(`SELECT * FROM qstash_messages WHERE status = 'failed' AND run_id IS NOT NULL
        AND seq < @beforeSeq AND (@runId IS NULL OR run_id = @runId)
        AND (@ids IS NULL OR id IN (SELECT value FROM json_each(@ids))) ORDER BY seq DESC LIMIT @limit`),
      storedMessages: db.prepare('SELECT * FROM qstash_messages WHERE run_id = ? ORDER BY seq'),
      deleteDeadLetters: db.prepare(`DELETE FROM qstash_messages WHERE status = 'failed' AND run_id IS NOT NULL
        AND id IN (SELECT value FROM json_each(?))`),
      newestRuns: db.prepare(`SELECT id, created_at AS createdAt FROM runs WHERE protocol = 'upstash'
        ORDER BY created_at DESC, id DESC LIMIT @limit`),
      runsBefore: db.prepare(`SELECT id, created_at AS createdAt FROM runs WHERE protocol = 'upstash'
        AND (created_at < @at OR (created_at = @at AND id < @id)) ORDER BY created_at DESC, id DESC LIMIT @limit`),
      cancelPending:
        db.prepare(`UPDATE qstash_messages SET status = 'cancelled', updated_at = @now WHERE run_id = @runId AND status = 'pending'
        AND (call_type IS NULL OR call_type != 'failureCall')`),
      nextAttempt: db
        .prepare('UPDATE runs SET attempts = attempts + 1, updated_at = @now WHERE id = @runId RETURNING attempts')
        .pluck(),
      nextDue: db
        .prepare(`SELECT MIN(MAX(due_at, COALESCE(lease_until, 0))) FROM qstash_messages WHERE status = 'pending'`)
        .pluck(),
      releaseAll: db.prepare(
        'UPDATE qstash_messages SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL',
      ),
      undelivered: db.prepare(
        `SELECT id, seq, call_type, spec FROM qstash_messages WHERE run_id = ? AND ${UNDELIVERED_WHERE}`,
      ),
      // The run's fresh messages held until the delivery they were published during is answered (publish-hold.ts).
      hold: db.prepare(`UPDATE qstash_messages
        SET lease_owner = @hold, lease_until = (SELECT d.lease_until FROM qstash_messages d WHERE d.id = @delivery)
        WHERE run_id = @runId AND status = 'pending' AND lease_owner IS NULL
          AND id IN (SELECT value FROM json_each(@ids))
          AND EXISTS (SELECT 1 FROM qstash_messages d
            WHERE d.id = @delivery AND d.lease_owner IS NOT NULL AND d.lease_until >= @now)`),
      // The run's delivery to the app in progress (leased by a runner, not held), the latest.
      leasedDelivery: db
        .prepare(`SELECT id FROM qstash_messages WHERE run_id = ? AND ${UNDELIVERED_WHERE}
          AND lease_owner IS NOT NULL AND substr(lease_owner, 1, ${HOLD_PREFIX.length}) != '${HOLD_PREFIX}' AND lease_until >= ?
          ORDER BY seq DESC LIMIT 1`)
        .pluck(),
      renewHold: db.prepare(`UPDATE qstash_messages SET lease_until = ? WHERE status = 'pending' AND lease_owner = ?`),
      releaseHeld: db.prepare(`UPDATE qstash_messages SET lease_owner = NULL, lease_until = NULL
        WHERE run_id = ? AND status = 'pending' AND lease_owner = ?`),
      anyHeld: db
        .prepare(`SELECT 1 FROM qstash_messages WHERE run_id = ? AND status = 'pending' AND lease_owner = ? LIMIT 1`)
        .pluck(),
      heldDue: db.prepare(`SELECT ${DUE_COLUMNS}, length(spec) AS spec_bytes FROM qstash_messages
        WHERE run_id = @runId AND status = 'pending' AND lease_owner = @hold AND flow_key IS NULL AND due_at <= @now
        ORDER BY seq LIMIT @limit`),
      settleDelivered:
        db.prepare(`UPDATE qstash_messages SET status = 'delivered', unreachable_since = NULL, lease_owner = NULL, lease_until = NULL,
        updated_at = @now WHERE id = @id AND status = 'pending'`),
      owes: db.prepare(`SELECT 1 FROM qstash_messages WHERE run_id = ? AND status = 'pending' LIMIT 1`).pluck(),
      countOfRun: db.prepare('SELECT COUNT(*) FROM qstash_messages WHERE run_id = ?').pluck(),
      deleteOfRun: db.prepare('DELETE FROM qstash_messages WHERE run_id = ?'),
      deleteConfig: db.prepare('DELETE FROM qstash_runs WHERE run_id = ?'),
      countSettled: db
        .prepare(`SELECT COUNT(*) FROM (SELECT 1 FROM qstash_messages WHERE run_id IS NULL AND status != 'pending' AND updated_at < ?
        ORDER BY updated_at LIMIT ?)`)
        .pluck(),
      deleteSettled: db.prepare(`DELETE FROM qstash_messages WHERE seq IN (SELECT seq FROM qstash_messages
        WHERE run_id IS NULL AND status != 'pending' AND updated_at < ? ORDER BY updated_at LIMIT ?)`),
    };
    this.#s = s;
    const messageParams = (m: M.NewMessage) => ({
      id: m.id,
      runId: m.runId,
      callType: m.callType,
      kind: m.kind,
      spec: JSON.stringify(m.spec),
      status: m.delivered ? 'delivered' : 'pending',
      dueAt: m.dueAt,
      dedupKey: m.dedupKey,
      now: m.now,
      ...flowParams(m),
    });
    const insertOne = (m: M.NewMessage): { id: string; deduplicated: boolean } => {
      if (s.insertMessage.run(messageParams(m)).changes > 0) return { id: m.id, deduplicated: false };
      return { id: s.byDedup.get(m.dedupKey) as string, deduplicated: true };
    };
    // `published`: the messages this publish stored, which no delivery ran yet.
    // How many of `published` it held.
    const settleDuring = (during: readonly DeliveryRef[], published: ReadonlySet<string>, now: number): number => {
      let held = 0;
      for (const { runId, step } of during) {
        const rows = (s.undelivered.all(runId) as InFlightRow[]).filter((row) => !published.has(row.id));
        const id = deliveryInProgress(rows.map(toInFlight), step);
        if (id === undefined) continue;
        const ids = JSON.stringify([...published]);
        if (published.size > 0) held += s.hold.run({ hold: holdOwner(id), delivery: id, runId, ids, now }).changes;
        s.settleDelivered.run({ id, now });
      }
      return held;
    };
    const holdBehind = (runIds: readonly string[], published: ReadonlySet<string>, now: number): void => {
      const ids = JSON.stringify([...published]);
      for (const runId of runIds) {
        const id = s.leasedDelivery.get(runId, now) as string | undefined;
        if (id !== undefined) s.hold.run({ hold: holdOwner(id), delivery: id, runId, ids, now });
      }
    };
    // IMMEDIATE: the write lock up front, as the `Store`'s transactions take it. The store's changes
    // join it (`connection.apply`, a savepoint): a failing change (an unknown run) undoes it all.
    const createRun = db.transaction((run: M.NewUpstashRun, first: M.NewMessage, alongside: Alongside | undefined) => {
      const inserted = s.insertRun.run({ ...run, headers: JSON.stringify(run.headers) }).changes > 0;
      if (!inserted) return { created: false, applied: appliedAttempts([]) };
      s.insertConfig.run(run.id, run.config);
      insertOne(first);
      if (!alongside) return { created: true, applied: appliedAttempts([]) };
      settleDuring(alongside.during ?? [], new Set(), alongside.now);
      return { created: true, applied: connection.apply(alongside.changes, alongside.returning) };
    });
    this.#createRun = (run, first, alongside) => createRun.immediate(run, first, alongside);
    const insert = db.transaction((messages: readonly M.NewMessage[]) => messages.map(insertOne));
    this.#insert = (messages) => insert.immediate(messages);
    const publish = db.transaction((messages: readonly M.PublishedMessage[], options: M.PublishOptions) => {
      const results = messages.map((m) => insertOne(m.message));
      const fresh = messages.filter((_, i) => !results[i]!.deduplicated);
      const runs = new Set(fresh.map((m) => m.message.runId));
      const held = settleDuring(
        (options.during ?? []).filter((ref) => runs.has(ref.runId)),
        new Set(messages.map((m) => m.message.id)),
        options.now,
      );
      const behind = (options.behind ?? []).filter((runId) => runs.has(runId));
      if (behind.length > 0) holdBehind(behind, new Set(fresh.map((m) => m.message.id)), options.now);
      return {
        results,
        held,
        applied: connection.apply(
          fresh.flatMap((m) => m.changes),
          options.returning,
        ),
      };
    });
    this.#publish = (messages, options) => publish.immediate(messages, options);
    const claim = db.transaction(({ now, limit, owner, leaseMs, maxBytes, atLeastOne }: M.MessageClaimOptions) => {
      const take = Math.max(0, Math.trunc(limit));
      // Read past the limit: messages of a full key are parked, not counted.
      const due = s.due.all({ now, limit: take * 2 + FLOW_LOOKAHEAD }) as DueRow[];
      const rows = withinBytes(due, maxBytes ?? Number.POSITIVE_INFINITY, atLeastOne ?? true);
      const { admitted, parked } = admitMessages(rows, take, now, flowUsageReader(s.flowExecuting, s.flowStarted, now));
      for (const row of admitted) s.lease.run({ id: row.id, owner, until: now + leaseMs, now });
      for (const wait of parked) s.park.run({ id: wait.id, until: wait.until });
      return admitted.map((row) => toMessage({ ...row, spec: s.spec.get(row.id) as string }));
    });
    // Leases, parked due times and flow stamps only: unsynced (a lost flow stamp after a power loss
    // lets one more delivery of its key start). A claim that finds nothing due (most wake-ups: a
    // delivery ended) takes no write lock: a plain read first; what falls due meanwhile is found by
    // the next wake or poll, as if the claim had run a moment earlier.
    this.#claim = (options) =>
      s.anyDue.get({ now: options.now }) === undefined ? [] : unsynced(() => claim.immediate(options));
    // One commit for every lease in flight and its holds.
    this.#renew = db.transaction((ids: readonly string[], owner: string, until: number) => {
      for (const id of ids) {
        s.renew.run(until, id, owner);
        s.renewHold.run(until, holdOwner(id));
      }
    });
    // The hand-off (publish-hold.ts): the held messages a worker sends at once leased to it, the rest released.
    const takeHeld = db.transaction((runId: string, deliveryId: string, take: M.HeldTake) => {
      const hold = holdOwner(deliveryId);
      const due =
        take.limit <= 0
          ? []
          : (s.heldDue.all({ runId, hold, now: take.now, limit: Math.trunc(take.limit) }) as DueRow[]);
      const rows = withinBytes(due, take.maxBytes, take.atLeastOne);
      for (const row of rows) s.lease.run({ id: row.id, owner: take.owner, until: take.until, now: take.now });
      const taken = rows.map((row) => toMessage({ ...row, spec: s.spec.get(row.id) as string }));
      return { taken, released: s.releaseHeld.run(runId, hold).changes };
    });
    // Nothing held (the call after each settle, a delivery that published nothing): a plain read, no
    // write lock. A hold is made only behind a leased delivery, in a write serialized with its settle;
    // the worker calls again after the settle, when any hold made before it is there to read.
    this.#takeHeld = (runId, deliveryId, take) =>
      s.anyHeld.get(runId, holdOwner(deliveryId)) === undefined
        ? { taken: [], released: 0 }
        : unsynced(() => takeHeld.immediate(runId, deliveryId, take));
    const pruneRuns = db.transaction((runIds: readonly string[], { dryRun }: { dryRun: boolean }) => {
      const kept: string[] = [];
      let messages = 0;
      for (const runId of runIds) {
        if (s.owes.get(runId) !== undefined) {
          kept.push(runId);
          continue;
        }
        messages += dryRun ? (s.countOfRun.get(runId) as number) : s.deleteOfRun.run(runId).changes;
        if (!dryRun) s.deleteConfig.run(runId);
      }
      return { kept, messages };
    });
    this.#pruneRuns = (runIds, options) => pruneRuns.immediate(runIds, options);
  }

  async createRun(
    run: M.NewUpstashRun,
    first: M.NewMessage,
    alongside?: Alongside,
  ): Promise<{ created: boolean; applied: Applied }> {
    return this.#createRun(run, first, alongside);
  }

  async publish(messages: readonly M.PublishedMessage[], options: M.PublishOptions): Promise<M.StoredPublish> {
    return messages.length === 0
      ? { results: [], applied: appliedAttempts([]), held: 0 }
      : this.#publish(messages, options);
  }

  async runConfig(runId: string): Promise<string | undefined> {
    return this.#s.config.get(runId) as string | undefined;
  }

  async insertMessages(messages: readonly M.NewMessage[]): Promise<{ id: string; deduplicated: boolean }[]> {
    return messages.length === 0 ? [] : this.#insert(messages);
  }

  async claimDue(options: M.MessageClaimOptions): Promise<M.StoredMessage[]> {
    return options.limit <= 0 ? [] : this.#claim(options);
  }

  async renew(ids: readonly string[], owner: string, until: number): Promise<void> {
    this.#unsynced(() => this.#renew(ids, owner, until));
  }

  async releaseHeld(runId: string, deliveryId: string): Promise<number> {
    return this.#unsynced(() => this.#s.releaseHeld.run(runId, holdOwner(deliveryId)).changes);
  }

  async takeHeld(
    runId: string,
    deliveryId: string,
    take: M.HeldTake,
  ): Promise<{ taken: M.StoredMessage[]; released: number }> {
    return this.#takeHeld(runId, deliveryId, take);
  }

  async settle(id: string, owner: string, patch: M.MessagePatch, now: number): Promise<boolean> {
    const write = () =>
      this.#s.settle.run({
        id,
        owner,
        now,
        status: patch.status,
        dueAt: patch.dueAt ?? null,
        retried: patch.retried ?? null,
        setUnreachable: patch.unreachableSince === undefined ? 0 : 1,
        unreachableSince: patch.unreachableSince ?? null,
      });
    // A message failed for good is its dead letter (the DLQ): synced, as an accepted message is.
    const result = patch.status === 'failed' ? write() : this.#unsynced(write);
    return result.changes > 0;
  }

  async logDelivery(changes: readonly Change[], returning: boolean): Promise<Applied> {
    return this.#unsynced(() => this.#apply(changes, returning));
  }

  async runMessages(runId: string, upToSeq: number = Number.MAX_SAFE_INTEGER, afterSeq = 0): Promise<M.RunMessage[]> {
    return (this.#s.runMessages.all(runId, afterSeq, upToSeq) as RunMessageRow[]).map(toRunMessage);
  }

  async runsByStart(after: M.RunStart | undefined, limit: number): Promise<M.RunStart[]> {
    const rows = after
      ? this.#s.runsBefore.all({ at: after.createdAt, id: after.id, limit })
      : this.#s.newestRuns.all({ limit });
    return rows as M.RunStart[];
  }

  async deadLetters(query: M.DeadLetterQuery): Promise<M.DeadLetter[]> {
    const beforeSeq = query.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const ids = query.ids === undefined ? null : JSON.stringify(query.ids);
    const rows = this.#s.deadLetters.all({ beforeSeq, runId: query.runId ?? null, ids, limit: query.limit });
    return (rows as (MessageRow & { updated_at: number })[]).map((row) => ({
      ...toMessage(row),
      failedAt: Number(row.updated_at),
    }));
  }

  async storedMessages(runId: string): Promise<M.StoredMessage[]> {
    return (this.#s.storedMessages.all(runId) as MessageRow[]).map(toMessage);
  }

  async deleteDeadLetters(ids: readonly string[]): Promise<number> {
    return ids.length === 0 ? 0 : this.#s.deleteDeadLetters.run(JSON.stringify(ids)).changes;
  }

  async cancelPending(runId: string, now: number): Promise<number> {
    return this.#unsynced(() => this.#s.cancelPending.run({ runId, now }).changes);
  }

  async nextAttemptSeq(runId: string, now: number): Promise<number> {
    // Unsynced: only the attempt committed later with this number keeps it, and WAL order makes
    // that commit's fsync keep the count too (lost together, the number is simply given again).
    return this.#unsynced(() => this.#s.nextAttempt.get({ runId, now }) as number);
  }

  async nextDueAt(): Promise<number | null> {
    return (this.#s.nextDue.get() as number | null) ?? null;
  }

  async releaseAll(): Promise<void> {
    this.#s.releaseAll.run();
  }

  async pruneRuns(
    runIds: readonly string[],
    options: { dryRun: boolean },
  ): Promise<{ kept: string[]; messages: number }> {
    return runIds.length === 0 ? { kept: [], messages: 0 } : this.#pruneRuns(runIds, options);
  }

  async pruneSettled({ before, limit, dryRun }: { before: number; limit: number; dryRun: boolean }): Promise<number> {
    const take = Math.max(0, Math.trunc(limit));
    return dryRun
      ? (this.#s.countSettled.get(before, take) as number)
      : this.#s.deleteSettled.run(before, take).changes;
  }

  /** For tests: the database this store writes to. */
  get database(): Database {
    return this.#db;
  }
}
