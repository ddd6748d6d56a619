import { randomUUID } from 'node:crypto';
import type { StartRequest, StepRecord } from '../protocol/messages.js';
import { RunnerActions } from './actions.js';
import { alertConfig, type AlertConfig } from './alerts/options.js';
import { announce } from './commit/announce.js';
import { CallCredentials } from './drive/call-credentials.js';
import { CommitQueue, type Commit } from './commit/commit-queue.js';
import { DEFAULT_HEADERS_TIMEOUT_MS } from './drive/dispatch.js';
import { EgressGate } from './egress/gate.js';
import { Driver } from './drive/driver.js';
import { EventBus } from './commit/events.js';
import type { Logger } from './telemetry/logger.js';
import { parseOriginPatterns } from './egress/origins.js';
import { resolveRunnerOptions, type RunnerOptions } from './runner-options.js';
import { QStashEngine } from './qstash/engine.js';
import { openQstashStores } from './qstash/stores.js';
import { RunEnds } from './run-end/run-ends.js';
import { Scheduler } from './background/scheduler.js';
import { ScheduleService } from './schedules/service.js';
import { RetentionService } from './retention/service.js';
import type { Run, Store } from './store/types.js';
import { TokenSet } from './tokens.js';

export type { RunnerOptions } from './runner-options.js';

/**
 * Drives runs: claims due work (`Scheduler`), sends drive requests and commits each streamed step
 * and the settled outcome (`Driver`), answers the API's actions (`RunnerActions`), and tells
 * listeners after every commit. This class only wires those parts together.
 */
export class Runner {
  readonly events: EventBus;
  readonly tokens: TokenSet;
  readonly store: Store;
  readonly logger: Logger;
  /** This runner's id: the lease owner in the store, and the fence on its commits. */
  readonly owner = `runner-${randomUUID()}`;
  private readonly queue: CommitQueue;
  private readonly scheduler: Scheduler;
  private readonly actions: RunnerActions;
  /** Cron schedules that start runs (their own timer; see schedules/service.ts). */
  readonly schedules: ScheduleService;
  /** Pruning of finished runs (`RunnerOptions.retention`, and `POST /v1/prune`). */
  readonly retention: RetentionService;
  /** The one way out: every request the runner sends goes through it (runner-core/egress/). */
  readonly egress: EgressGate;
  private readonly exclusive: boolean;
  private readonly tracing: RunnerOptions['tracing'];
  /** Failure alerts, checked (`RunnerOptions.alerts`); createRunner completes its public URL. */
  readonly alerts: AlertConfig | undefined;
  /** The QStash API's engine (`/v2/…`, runner-core/qstash/); undefined on a store other than SQLite or PostgreSQL. */
  readonly qstash: QStashEngine | undefined;
  private stopping: Promise<void> | undefined;

  constructor(given: RunnerOptions) {
    // Every default applied once (runner-options.ts); nothing below falls back to a default again.
    const options = resolveRunnerOptions(given);
    this.store = options.store;
    this.logger = options.logger;
    this.events = new EventBus(this.logger);
    this.tokens = new TokenSet(options.tokens);
    if (this.tokens.size === 0)
      throw new Error('The runner needs at least one token (WF_TOKEN) to sign drive requests with.');
    // Records are read back (in the commit's transaction) only when someone listens.
    this.alerts = options.alerts ? alertConfig(options.alerts, this.tokens.signing[0]!) : undefined;
    this.queue = new CommitQueue(options.store, () => this.events.size > 0);
    const { now, leaseMs } = options;
    this.exclusive = options.exclusive;
    this.tracing = options.tracing;
    // Parsed once and shared: `allowOrigin` adds to this very list, which every check reads.
    const allowedOrigins = parseOriginPatterns(options.allowedOrigins);
    this.egress = new EgressGate(allowedOrigins, options.dispatch, options.egress, now);
    const credentials = new CallCredentials(this.tokens.signing, options.redactHeaders);
    const commit: Commit = async (changes, owner) => {
      // Whatever a send site logged, no credential header reaches the store or the event stream.
      announce(this.events, await this.queue.push(credentials.redactAttempts(changes), owner));
    };
    // How every run ends, whoever ends it (run-end/): the driver, the actions and the QStash engine.
    const ends = new RunEnds({
      store: this.store,
      commit,
      alerts: this.alerts !== undefined,
      tracing: options.tracing,
      logger: this.logger,
    });
    // A child run that ended wakes its native parent (the actions are built below).
    ends.onEnded(({ run }) => this.actions.childEnded(run));
    let driver: Driver | undefined;
    this.scheduler = new Scheduler({
      store: this.store,
      owner: this.owner,
      now,
      concurrency: options.concurrency,
      leaseMs,
      pollMs: options.pollMs,
      logger: this.logger,
      drive: (request) => driver!.drive(request),
      // Read back only for listeners: flow control's waiting reasons reach the dashboards live.
      onWaiting: (runIds) => this.announceWaiting(runIds),
    });
    driver = new Driver({
      store: this.store,
      owner: this.owner,
      now,
      unreachable: options.unreachable,
      scheduler: this.scheduler,
      commit,
      logger: this.logger,
      ...(this.alerts && { alerts: this.alerts }),
      // Built below; only Upstash-protocol runs (which exist only with the engine) ask for it.
      upstashAttemptSeq: (runId, at) => {
        if (!this.qstash)
          throw new Error(
            `Expected the QStash engine for Upstash-protocol run ${runId}, but this runner's store has none.`,
          );
        return this.qstash.context.messages.nextAttemptSeq(runId, at);
      },
      // Child workflows start and link through the actions (created below; only called later).
      children: { start: (request) => this.actions.startRun(request) },
      ends,
      onWaitingForSlot: (runIds) => this.announceWaiting(runIds),
      attempt: {
        egress: this.egress,
        tokens: this.tokens.signing,
        now,
        driveDeadlineMs: Math.min(options.dispatch?.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, leaseMs),
        inlineStepsLimitBytes: options.inlineStepsLimitBytes,
        logBodyLimitBytes: options.logBodyLimitBytes,
        credentials,
        tracing: options.tracing,
      },
    });
    this.actions = new RunnerActions({
      store: this.store,
      events: this.events,
      owner: this.owner,
      now,
      leaseMs,
      eventKeepMs: options.eventKeepMs,
      credentials,
      allowedOrigins,
      scheduler: this.scheduler,
      commit,
      ends,
    });
    // The engine's tables, built beside the store on its database (undefined for a test's fake store).
    const qstashStores = openQstashStores(options.store.connection);
    this.qstash = qstashStores
      ? new QStashEngine(
          {
            store: this.store,
            commit,
            events: this.events,
            credentials,
            allowedOrigins,
            egress: this.egress,
            onWaitingForSlot: (runId) => void (runId !== null && this.announceWaiting([runId])),
            owner: this.owner,
            now,
            logger: this.logger,
            leaseMs,
            pollMs: options.pollMs,
            concurrency: options.concurrency,
            unreachable: options.unreachable,
            inlineLimitBytes: options.inlineStepsLimitBytes,
            logBodyLimitBytes: options.logBodyLimitBytes,
            token: this.tokens.signing[0]!,
            signingKeys: options.upstashSigningKeys,
            exclusive: this.exclusive,
            ends,
            tracing: options.tracing,
            limits: options.upstashLimits,
          },
          qstashStores,
        )
      : undefined;
    this.schedules = new ScheduleService({
      store: this.store.schedules,
      now,
      allowedOrigins,
      redact: (headers) => credentials.redact(headers),
      startRun: (request) => this.actions.startRun(request),
      logger: this.logger,
      tickMs: Math.min(options.pollMs, 250),
    });
    this.retention = new RetentionService({
      // The QStash parts only where the engine runs: their rows exist only then.
      parts: {
        retention: this.store.retention,
        ...(qstashStores && { messages: qstashStores.messages, waits: qstashStores.waits }),
      },
      retentionMs: options.retention,
      now,
      logger: this.logger,
    });
  }

  /**
   * Tells listeners about runs left waiting (for a flow control slot, or a slot at their
   * destination's origin): the run as stored, with why it waits. Read back only for listeners.
   */
  private announceWaiting(runIds: readonly string[]): void {
    if (this.events.size === 0) return;
    void (async () => {
      for (const id of runIds) {
        const run = await this.store.getRun(id);
        if (run) this.events.emit({ type: 'run', run: this.withWaitingReason(run) });
      }
    })().catch((error: unknown) => this.logger.error(`announcing waiting runs failed: ${String(error)}`));
  }

  /**
   * The run with why it waits for a slot at its destination's origin, when it does (this runner's
   * own knowledge, kept in memory: flow control's reason, stored by the claim, comes first).
   */
  withWaitingReason(run: Run): Run {
    if (run.queuedReason !== undefined || run.finishedAt !== null) return run;
    const reason = this.egress.waitingReason(run.id);
    return reason === undefined ? run : { ...run, queuedReason: reason };
  }

  /** Drive requests in flight now (for metrics). */
  get drivesInFlight(): number {
    return this.scheduler.inFlight;
  }

  /** Starts looking for due work (including runs a previous process left in flight). */
  async start(): Promise<void> {
    if (this.exclusive) await this.store.releaseAll();
    this.scheduler.start();
    this.schedules.start();
    this.retention.start();
    await this.qstash?.start();
  }

  /** Stops scheduling, gives in-flight drives `graceMs` to finish, then aborts them (their steps run again later). */
  stop(graceMs = 2_000): Promise<void> {
    // Idempotent: a second call waits for the first (closing the dispatcher twice throws).
    return (this.stopping ??= this.shutdown(graceMs));
  }

  private async shutdown(graceMs: number): Promise<void> {
    await this.schedules.stop();
    await this.retention.stop();
    await this.scheduler.stop(graceMs);
    await this.qstash?.stop(graceMs);
    await this.queue.drain();
    await this.egress.close();
    // After the last drive settled: its spans and the runs that ended are exported before exit.
    await this.tracing?.shutdown();
  }

  /** Looks for due work now (coalesced), then sleeps until the next due time or `pollMs`. */
  wake(): void {
    this.scheduler.wake();
  }

  /** Creates a run (or finds it by idempotency key) and drives it at once; only for an allowed origin. */
  startRun(request: StartRequest): Promise<{ run: Run; created: boolean }> {
    return this.actions.startRun(request);
  }

  /** Allows one more origin from now on (`wf dev` adds its tunnel's once the tunnel is open). */
  allowOrigin(pattern: string): void {
    this.actions.allowOrigin(pattern);
  }

  /** Starts a new run like `runId`; `RunNotFoundError` when there is none. */
  rerun(runId: string): Promise<Run> {
    return this.actions.rerun(runId);
  }

  /** Cancels a run that has not finished; `RunNotFoundError`, `RunFinishedError` otherwise. */
  cancelRun(runId: string): Promise<Run> {
    return this.actions.cancelRun(runId);
  }

  /** Starts a failed or cancelled run again at its failed step; `RunNotFoundError`, `RunNotResumableError` otherwise. */
  resumeRun(runId: string): Promise<Run> {
    return this.actions.resumeRun(runId);
  }

  /**
   * Delivers an event to every step waiting for `eventId`, or keeps it for a later wait; Upstash
   * workflows waiting for it (`context.waitForEvent`) get it too, its data as the JSON body
   * `Client.notify` would send (nothing is kept for them: a notify without a run id, as on QStash).
   */
  async notify(eventId: string, data: unknown): Promise<{ delivered: string[]; kept: boolean }> {
    const native = await this.actions.notify(eventId, data);
    const upstash = this.qstash
      ? await this.qstash.waits.notify(eventId, data === undefined ? '' : JSON.stringify(data))
      : [];
    const reached = upstash.filter((notified) => notified.error === '').map((notified) => notified.wait.runId);
    if (reached.length === 0) return native;
    return { delivered: [...native.delivered, ...reached], kept: native.kept };
  }

  /** The committed steps a route replays from, as the drive request carries them. */
  committedSteps(runId: string): Promise<StepRecord[]> {
    return this.actions.committedSteps(runId);
  }
}
