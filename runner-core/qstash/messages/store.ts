import type { FlowControl } from '../../../protocol/flow-control.js';
import type { Applied, Change, NewRun } from '../../store/types.js';
import type { DeliveryRef } from '../delivery/in-progress.js';

/**
 * Where QStash-protocol runs and messages live: the same database as the runner's `Store` (SQLite
 * file or PostgreSQL schema), tables of their own (`qstash_runs`, `qstash_messages`), built beside
 * the store (stores.ts). The run's row in `runs`, its steps and attempts are the store's records,
 * written with its `apply`: by the runner's commit, or inside this store's transaction when they
 * must commit with a message (`publish`). Messages are claimed with leases, so several runners on
 * one PostgreSQL database deliver each message once at a time.
 */

/** A message as stored: what `delivery.ts` sends (credential header values sealed, see `sealed.ts`). */
export interface StoredSpec {
  destination: string;
  method: string;
  body: string;
  /** What the destination receives; credential values are `[redacted]` here, the real ones in `sealed`. */
  headers: Record<string, string>;
  sealed?: string;
  retries: number;
  retryDelay: string | null;
  timeoutMs: number | null;
  callback: { url: string; headers: Record<string, string>; sealed?: string } | null;
  failureCallback: { url: string; headers: Record<string, string>; sealed?: string } | null;
  redact: string[];
}

export type MessageStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

export interface NewMessage {
  id: string;
  runId: string | null;
  /** A run message's `Upstash-Workflow-CallType` (`step`, `toCallback`, `fromCallback`, `failureCall`). */
  callType: string | null;
  /** `workflow`: the body sent is the run's messages (the SDK's steps); `plain`: the message's own body. */
  kind: 'workflow' | 'plain';
  spec: StoredSpec;
  dueAt: number;
  dedupKey: string | null;
  /** Its key's limits hold its deliveries back (parallelism: in flight at once; rate: started per period). */
  flow: FlowControl | null;
  now: number;
  /** Stored delivered, never sent: a resumed run's list entry its old run had delivered (../client/dlq-revive.ts). */
  delivered?: boolean;
}

export interface StoredMessage {
  id: string;
  seq: number;
  runId: string | null;
  callType: string | null;
  kind: 'workflow' | 'plain';
  spec: StoredSpec;
  status: MessageStatus;
  dueAt: number;
  retried: number;
  unreachableSince: number | null;
  createdAt: number;
}

/** One entry of a run's message list, as the SDK reads it. */
export interface RunMessage {
  id: string;
  seq: number;
  callType: string | null;
  body: string;
  status: MessageStatus;
  retried: number;
  createdAt: number;
}

export interface MessageClaimOptions {
  now: number;
  limit: number;
  owner: string;
  leaseMs: number;
  /** The claimed messages' specs (their bodies) together stay within this many bytes… @default no bound */
  maxBytes?: number;
  /** …except that the first may be larger when this is set (nothing else is in flight). @default true */
  atLeastOne?: boolean;
}

/** What `takeHeld` may lease to the worker that got a delivery's answer. */
export interface HeldTake {
  owner: string;
  until: number;
  now: number;
  limit: number;
  maxBytes: number;
  atLeastOne: boolean;
}

export interface DeadLetterQuery {
  beforeSeq?: number;
  runId?: string;
  /** Only these (DLQ ids are message ids). */
  ids?: readonly string[];
  limit: number;
}

/** A message failed for good, and when (its last settle). */
export interface DeadLetter extends StoredMessage {
  failedAt: number;
}

/** Where a run sits in start order. */
export interface RunStart {
  id: string;
  createdAt: number;
}

/** A QStash-protocol run's first row: inserted with its config and its first message in one transaction. */
export interface NewUpstashRun
  extends Pick<NewRun, 'id' | 'url' | 'body' | 'headers' | 'retries' | 'retryDelayMs' | 'now'> {
  /** `invoke:<parent>:<step>` for a run `context.invoke` started (api/links.ts): the dashboards link parent and child. */
  idempotencyKey: string | null;
  config: string;
}

/** What a claim found and what settling it changes. */
export interface MessagePatch {
  status: MessageStatus;
  dueAt?: number;
  retried?: number;
  unreachableSince?: number | null;
}

/** A published message and the store's changes it brings (its step's row), applied only when the message is new. */
export interface PublishedMessage {
  message: NewMessage;
  changes: readonly Change[];
}

/** What a publish writes beside its messages, in the same transaction. */
/** What `MessageStore.publish` stored. */
export interface StoredPublish {
  results: { id: string; deduplicated: boolean }[];
  applied: Applied;
  held: number;
}

export interface PublishOptions {
  /**
   * The deliveries the app published during (one per run; ../delivery/in-progress.ts picks the
   * message): settled as delivered, whoever holds their lease, when a message of the run is new;
   * the run's new messages held until that delivery is answered (publish-hold.ts).
   */
  during?: readonly DeliveryRef[];
  /**
   * Runs whose fresh messages wait for the run's delivery in progress, if it has one (its leased
   * delivery to the app, the latest), which stays unsettled: the engine's wait end (publish-hold.ts).
   */
  behind?: readonly string[];
  /** Read back the runs and steps the changes touched (someone listens). */
  returning: boolean;
  now: number;
}

export interface MessageStore {
  /**
   * Inserts the run (status `running`, `protocol` 'upstash'), its config and its first message;
   * `created` false (and nothing written) when the run id or its idempotency key exists. With
   * `alongside`, in the same transaction: its changes applied and its deliveries settled (an
   * invoke: the invoker's step row, and the delivery that invoked).
   */
  createRun(
    run: NewUpstashRun,
    first: NewMessage,
    alongside?: PublishOptions & { changes: readonly Change[] },
  ): Promise<{ created: boolean; applied: Applied }>;
  /**
   * Stores one publish in one transaction: `messages` inserted (a repeated deduplication key
   * answers the existing message's id, and its changes are not applied), the new ones' changes
   * applied, and the deliveries `during` settled. `held`: how many of the new ones wait for the
   * answer of the delivery they were published during (publish-hold.ts), so no claim finds them now.
   */
  publish(messages: readonly PublishedMessage[], options: PublishOptions): Promise<StoredPublish>;
  /** The run's config (JSON), or undefined for a run the QStash API did not start. */
  runConfig(runId: string): Promise<string | undefined>;
  /** Inserts messages in one transaction; a repeated deduplication key answers the existing message's id. */
  insertMessages(messages: readonly NewMessage[]): Promise<{ id: string; deduplicated: boolean }[]>;
  /** Leases up to `limit` pending messages due at `now`, oldest due first; two claimers never get the same one. */
  claimDue(options: MessageClaimOptions): Promise<StoredMessage[]>;
  /**
   * Extends the leases `owner` holds, and the holds of what was published during these deliveries
   * (publish-hold.ts).
   */
  renew(ids: readonly string[], owner: string, until: number): Promise<void>;
  /**
   * The delivery's answer came (or its request failed): what the app published during it becomes
   * claimable (publish-hold.ts). How many messages were held.
   */
  releaseHeld(runId: string, deliveryId: string): Promise<number>;
  /**
   * `releaseHeld`, but up to `limit` of the held messages that are due now, have no flow-control key
   * and fit in `maxBytes` together (`atLeastOne`: the first may be larger) are leased to `owner`
   * instead and returned (`taken`): the worker that got the answer sends them at once, with no claim
   * in between. `released`: how many became claimable.
   */
  takeHeld(runId: string, deliveryId: string, take: HeldTake): Promise<{ taken: StoredMessage[]; released: number }>;
  /**
   * Settles a claimed message and gives its lease back; false (nothing changed) when `owner` lost the
   * lease. On SQLite without an fsync (`unsyncedWrites`), but for `failed` (the message's dead letter,
   * the DLQ): a settle lost to a power cut leaves the message pending, delivered once more (at least
   * once), or cancelled at its claim if its run has ended.
   */
  settle(id: string, owner: string, patch: MessagePatch, now: number): Promise<boolean>;
  /**
   * Commits what a delivery of a run logged (its attempt; the run's failures and outage shown between
   * steps: no step result, no run end) without waiting for the disk where the database allows it
   * (SQLite: `unsyncedWrites`). Undefined where it does not (PostgreSQL): the caller commits them
   * through the runner's commit.
   */
  logDelivery(changes: readonly Change[], returning: boolean): Promise<Applied | undefined>;
  /**
   * The run's messages in order (up to `upToSeq`, after `afterSeq` when given): the list deliveries
   * carry (up to their own; the worker reads only what follows its last read: delivery/list-cache.ts)
   * and lazy fetches read.
   */
  runMessages(runId: string, upToSeq?: number, afterSeq?: number): Promise<RunMessage[]>;
  /**
   * Up to `limit` runs the QStash API started, newest start first (ties by id), after `after`: the
   * order `Client.logs` lists them in, as QStash does (the SDK's run ids are random, so id order is not it).
   */
  runsByStart(after: RunStart | undefined, limit: number): Promise<RunStart[]>;
  /**
   * Messages of runs that failed for good (QStash's DLQ: `dlq.ts`), newest first (by `seq`), at
   * most `limit`: those before `beforeSeq`, of one run, when given.
   */
  deadLetters(query: DeadLetterQuery): Promise<DeadLetter[]>;
  /** Every message of the run with its spec, in `seq` order (a DLQ resume copies them: ../client/dlq-revive.ts). */
  storedMessages(runId: string): Promise<StoredMessage[]>;
  /** Takes these messages out of the DLQ (deletes them; only failed ones); how many. */
  deleteDeadLetters(ids: readonly string[]): Promise<number>;
  /**
   * Cancels the run's pending messages (the run finished); how many. On SQLite without an fsync: a
   * message of a finished run is never sent (the worker cancels it when it claims it).
   */
  cancelPending(runId: string, now: number): Promise<number>;
  /** The next attempt number of a run (its `attempts` counter, raised by one). */
  nextAttemptSeq(runId: string, now: number): Promise<number>;
  /** When the next pending message becomes due (or its lease ends), for the worker's timer. */
  nextDueAt(): Promise<number | null>;
  /** Drops the leases a killed predecessor left (SQLite under `wf dev` only, like `Store.releaseAll`). */
  releaseAll(): Promise<void>;
  /**
   * Retention (runner-core/retention/), one transaction: deletes the messages and config of these
   * finished runs, except the runs that still have a pending message (a failure callback still
   * owed): those are `kept`, untouched, and pruning keeps the run too. With `dryRun` only counts.
   */
  pruneRuns(runIds: readonly string[], options: { dryRun: boolean }): Promise<{ kept: string[]; messages: number }>;
  /** Retention: deletes up to `limit` settled messages of no run (a plain publish) last changed before `before`; how many (a dry run counts them). */
  pruneSettled(options: { before: number; limit: number; dryRun: boolean }): Promise<number>;
}
