import { QstashWaits } from './waits/service.js';
import { WaitTimeouts } from './waits/timeouts.js';
import { createHmac } from 'node:crypto';
import type { EgressGate } from '../egress/gate.js';
import { encodeValue } from '../../protocol/values.js';
import type { CallCredentials } from '../drive/call-credentials.js';
import type { Commit } from '../commit/commit-queue.js';
import type { EventBus } from '../commit/events.js';
import type { Logger } from '../telemetry/logger.js';
import type { OriginPattern } from '../egress/origins.js';
import { cancellation, completion } from '../run-end/end.js';
import type { EndedRun, RunEnds } from '../run-end/run-ends.js';
import type { Tracing } from '../telemetry/tracing.js';
import { FINISHED_RUN_STATUSES, type Store } from '../store/types.js';
import type { UnreachablePolicy } from '../drive/unreachable.js';
import type { EngineContext, RunConfig } from './context.js';
import { answerInvoker } from './invoke.js';
import { DELIVERY_BODY_BUDGET_BYTES, DeliveryWorker } from './delivery/delivery.js';
import { runNotRunning } from './errors.js';
import { parseMessage, type MessageSpec } from './messages/spec.js';
import { publishMessages, type PublishResult } from './publish/publish.js';
import type { QstashStores } from './stores.js';
import type { UpstashSigningKeys } from './signature.js';
import { forwardedHeader, UpstashHeader, WorkflowHeader } from './headers.js';
import { listStream } from './delivery/run-list.js';
import { checkPlanLimits, DEFAULT_UPSTASH_LIMITS, type UpstashLimits } from './publish/limits.js';

export type { UpstashSigningKeys } from './signature.js';

/**
 * The runner as QStash for `@upstash/workflow` apps (issue 14): messages published to `/v2/…` are
 * stored, delivered signed, retried, and followed by their callbacks (`DeliveryWorker`); a
 * workflow's run is a first-class run of the store (`runs`, `steps`, `attempts`, events) that only
 * this engine drives. Built by the `Runner` when its store is SQLite or PostgreSQL.
 */

export interface QStashEngineOptions {
  store: Store;
  commit: Commit;
  events: EventBus;
  credentials: CallCredentials;
  allowedOrigins: readonly OriginPattern[];
  /** The runner's egress gate: every delivery, call and callback goes out through it. */
  egress: EgressGate;
  /** A run's message deferred for want of a slot at its destination. */
  onWaitingForSlot?: (runId: string | null) => void;
  owner: string;
  now: () => number;
  logger: Logger;
  leaseMs: number;
  pollMs: number;
  concurrency: number;
  unreachable: UnreachablePolicy;
  inlineLimitBytes: number;
  logBodyLimitBytes: number;
  /** Largest call answer kept for its callback. @default `limits.maxMessageBytes` (the largest message the API accepts) */
  maxMessageBytes?: number;
  /** How long a delivery without `Upstash-Timeout` waits for its answer. @default 15 minutes */
  timeoutMs?: number;
  /** The runner's first token: the default signing keys derive from it (stable across restarts). */
  token: string;
  signingKeys?: UpstashSigningKeys;
  exclusive: boolean;
  /** How runs end (run-end/): the engine's ends go there, and it hears of every run that ended (a cancel by `wf cancel` too). */
  ends: RunEnds;
  /** The runner's tracer, when traces are exported (telemetry/). */
  tracing?: Tracing | undefined;
  /** The plan limits an app's publish is held to (limits.ts). @default DEFAULT_UPSTASH_LIMITS */
  limits?: UpstashLimits;
}

/** QStash's longest request timeout: the SDK answers only once its step ran, and steps may be long. */
export const DEFAULT_DELIVERY_TIMEOUT_MS = 15 * 60_000;

/**
 * Signing keys when none are configured: derived from the runner's token, so they stay the same
 * across restarts and an app configured once keeps verifying. `sig_` like QStash's own.
 */
export function defaultSigningKeys(token: string): UpstashSigningKeys {
  const derive = (label: string): string =>
    `sig_${createHmac('sha256', token).update(`wfkit upstash signing key ${label}`).digest('base64url').slice(0, 32)}`;
  return { current: derive('current'), next: derive('next') };
}

export class QStashEngine {
  readonly signingKeys: UpstashSigningKeys;
  readonly context: EngineContext;
  /** The engine's own tables (stores.ts), in the store's database. */
  readonly stores: QstashStores;
  /** `waitForEvent` and `notify` (waits/service.ts): the `/v2` routes, `wf notify` and the timeouts share it. */
  readonly waits: QstashWaits;
  private readonly waitTimeouts: WaitTimeouts;
  private readonly worker: DeliveryWorker;
  private readonly exclusive: boolean;
  readonly limits: UpstashLimits;

  constructor(options: QStashEngineOptions, stores: QstashStores) {
    this.stores = stores;
    this.signingKeys = options.signingKeys ?? defaultSigningKeys(options.token);
    this.exclusive = options.exclusive;
    this.limits = options.limits ?? DEFAULT_UPSTASH_LIMITS;
    this.context = {
      store: options.store,
      messages: stores.messages,
      commit: options.commit,
      events: options.events,
      credentials: options.credentials,
      allowedOrigins: options.allowedOrigins,
      now: options.now,
      logger: options.logger,
      wake: () => this.worker.wake(),
      publish: (specs) => publishMessages(this.context, specs),
      deliveryStartedAt: (runId, stepId) => this.worker.startedAt(runId, stepId),
      ends: options.ends,
      tracing: options.tracing,
    };
    options.ends.onEnded((ended) => this.runEnded(ended));
    this.worker = new DeliveryWorker({
      context: this.context,
      owner: options.owner,
      egress: options.egress,
      ...(options.onWaitingForSlot && { onWaitingForSlot: options.onWaitingForSlot }),
      signingKeys: this.signingKeys,
      concurrency: options.concurrency,
      leaseMs: options.leaseMs,
      pollMs: options.pollMs,
      unreachable: options.unreachable,
      inlineLimitBytes: options.inlineLimitBytes,
      logBodyLimitBytes: options.logBodyLimitBytes,
      // A call's answer becomes a callback message: no larger than a message the API accepts.
      maxResponseBytes: options.maxMessageBytes ?? this.limits.maxMessageBytes,
      timeoutMs: options.timeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS,
      bodyBudgetBytes: DELIVERY_BODY_BUDGET_BYTES,
    });
    this.waits = new QstashWaits({
      store: options.store,
      waitStore: stores.waits,
      engine: this,
      commit: options.commit,
      logger: options.logger,
      now: options.now,
      redactNames: options.credentials.names,
    });
    this.waitTimeouts = new WaitTimeouts({
      store: options.store,
      waitStore: stores.waits,
      waits: this.waits,
      logger: options.logger,
      now: options.now,
      leaseMs: options.leaseMs,
      pollMs: options.pollMs,
    });
  }

  async start(): Promise<void> {
    if (this.exclusive) await this.context.messages.releaseAll();
    this.worker.start();
    this.waitTimeouts.start();
  }

  async stop(graceMs: number): Promise<void> {
    await Promise.all([this.worker.stop(graceMs), this.waitTimeouts.stop()]);
  }

  wake(): void {
    this.worker.wake();
  }

  /** Deliveries in flight now (for metrics). */
  get deliveriesInFlight(): number {
    return this.worker.inFlight;
  }

  /**
   * Stores what an app published (`/v2/publish`, `/v2/batch`: one message, or a batch in order),
   * settling the delivery it published during. See publish.ts.
   */
  async publish(specs: readonly MessageSpec[]): Promise<PublishResult[]> {
    checkPlanLimits(this.limits, specs);
    return publishMessages(this.context, specs, { fromApp: true });
  }

  /**
   * The run's list, as the SDK fetches it when a delivery came without a body: every message of
   * the run, its first (the payload) first. Undefined when there is no such QStash run or it
   * finished (the SDK takes the 404 as "the run ended").
   */
  async runSteps(runId: string): Promise<ReadableStream<Uint8Array> | undefined> {
    const run = await this.context.store.getRun(runId);
    if (run?.protocol !== 'upstash' || FINISHED_RUN_STATUSES.has(run.status)) return undefined;
    return listStream(await this.context.messages.runMessages(runId));
  }

  /**
   * `DELETE /v2/workflows/runs/:id`: the SDK's end of a run, `completed` with its result (the
   * body, JSON) or `cancelled` (`context.cancel()`, `Client.cancel`), through run-end as every end.
   */
  async finishRun(runId: string, end: SdkRunEnd): Promise<void> {
    const { store, now: clock, ends } = this.context;
    const run = await store.getRun(runId);
    if (run?.protocol !== 'upstash') throw runNotRunning(runId, undefined);
    if (FINISHED_RUN_STATUSES.has(run.status)) return;
    const now = clock();
    if (end.status === 'cancelled') await ends.end(runId, cancellation(runId, now), now);
    else await ends.end(runId, completion(resultOutput(end.body), now), now, { result: end.body });
  }

  /**
   * What follows the end of an Upstash run, however it ended (its SDK, a message failed for good,
   * `wf cancel`, the dashboards): its pending messages are dropped, and an invoked run answers its
   * invoker (`{body, isFailed, isCanceled}`).
   */
  private async runEnded({ run, result }: EndedRun): Promise<void> {
    if (run.protocol !== 'upstash') return;
    this.worker.runEnded(run.id);
    const { messages, now } = this.context;
    await messages.cancelPending(run.id, now());
    const config = await messages.runConfig(run.id);
    if (config === undefined) return;
    // Only a completed child has a body: QStash gives a failed or cancelled one's invoker none.
    const body = run.status === 'completed' ? result : undefined;
    await answerInvoker(this.context, JSON.parse(config) as RunConfig, {
      body,
      isFailed: run.status === 'failed',
      isCanceled: run.status === 'cancelled',
    });
  }

  /**
   * For the wait and notify endpoints (waits*.ts): appends `step` (the SDK's step JSON) to the run's list and
   * delivers it to the workflow, after `delayMs`. Throws `ApiError` 400 when the run is not running.
   */
  async appendRunStep(
    runId: string,
    step: string,
    options: { delayMs?: number; headers?: Record<string, string> } = {},
  ): Promise<string> {
    const run = await this.context.store.getRun(runId);
    if (run?.protocol !== 'upstash' || FINISHED_RUN_STATUSES.has(run.status)) throw runNotRunning(runId, run?.status);
    const headers: Record<string, string> = {
      [WorkflowHeader.RunId]: runId,
      [WorkflowHeader.Init]: 'false',
      [WorkflowHeader.Url]: run.url,
      [forwardedHeader(WorkflowHeader.SdkVersion)]: '1',
      'content-type': 'application/json',
      ...(options.delayMs !== undefined && { [UpstashHeader.Delay]: `${Math.max(0, Math.round(options.delayMs))}ms` }),
      ...options.headers,
    };
    // Held behind the run's delivery in progress, if any, as what a delivery publishes is (publish-hold.ts).
    const [result] = await publishMessages(this.context, [parseMessage(run.url, headers, step)], {
      behindDelivery: true,
    });
    return result!.messageId;
  }
}

/** How the SDK ends a run (`engine.finishRun`): completed with its result (JSON text), or cancelled. */
export type SdkRunEnd = { status: 'completed'; body: string } | { status: 'cancelled' };

/** The run's result as stored: the DELETE's body is the workflow's return value as JSON (empty for undefined). */
function resultOutput(body: string): string | null {
  if (body === '' || body === 'undefined') return null;
  let value: unknown = body;
  try {
    value = JSON.parse(body);
  } catch {}
  return encodeValue(value, 'the workflow') ?? null;
}
