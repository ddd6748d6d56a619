import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { StartRequest, StepRecord } from '../protocol/messages.js';
import { runAttempt, type AttemptContext } from './attempt.js';
import { CallCredentials } from './call-credentials.js';
import { CommitQueue } from './commit-queue.js';
import { createAgent, DEFAULT_HEADERS_TIMEOUT_MS, type DispatchOptions } from './dispatch.js';
import { ApiError, OriginNotAllowedError } from './errors.js';
import { LOOPBACK_ORIGINS, originAllowed, parseOriginPattern, parseOriginPatterns, type OriginPattern } from './origins.js';
import { EventBus } from './events.js';
import { newRunId } from './ids.js';
import { DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_MS } from './retry.js';
import { encodeValue } from '../protocol/values.js';
import { announce } from './announce.js';
import { toReplayRecords } from './replay-records.js';
import { refusedStarts } from './refused-starts.js';
import { settle } from './settle.js';
import { failureRequest, settleFailureCall } from './settle-failure-call.js';
import { unreachablePolicy, type UnreachablePolicy } from './unreachable.js';
import { pendingSteps, resolvePending } from './suspensions.js';
import { LeaseLostError } from './store/errors.js';
import { FINISHED_RUN_STATUSES, type Attempt, type Change, type Run, type Store } from './store/types.js';
import { TokenSet } from './tokens.js';

export interface RunnerOptions {
  store: Store;
  /** Tokens apps authenticate with; drive requests are signed with each (rotation). */
  tokens: readonly string[];
  /** Drive requests in flight at once. @default 256 */
  concurrency?: number;
  /** How long a claimed run stays ours without renewal. @default 15000 */
  leaseMs?: number;
  /** Longest wait between two looks for due work (timers cover the rest). @default 1000 */
  pollMs?: number;
  dispatch?: DispatchOptions;
  /** How long a notify that no wait received is kept for a wait registered later. @default 10 minutes */
  eventKeepMs?: number;
  /** This runner is the store's only user (SQLite): take over leftover leases on start. @default false */
  exclusive?: boolean;
  /**
   * Header names redacted before anything is stored or shown, besides the built-in
   * `CREDENTIAL_HEADERS` (case does not matter). A `context.call`'s real values are sealed.
   */
  redactHeaders?: readonly string[];
  /**
   * How long and how often an app that does not answer is tried again, apart from any step's
   * retries: base 1 s, capped at 30 s between tries, for 24 h before the run fails.
   */
  unreachable?: Partial<UnreachablePolicy>;
  /**
   * Origins the runner may send drive requests to (`https://app.example.com`, `https://*.example.com`,
   * `http://127.0.0.1:*`); a start for any other origin is refused with `OriginNotAllowedError`.
   * @default loopback only: `http://localhost:*`, `http://127.0.0.1:*`, `http://[::1]:*`
   */
  allowedOrigins?: readonly string[];
  /** For tests: route requests through another undici dispatcher. */
  dispatcher?: Dispatcher;
  inlineStepsLimitBytes?: number;
  logBodyLimitBytes?: number;
  now?: () => number;
}

/**
 * Drives runs: claims due work, sends drive requests, commits each streamed step, settles
 * the outcome (done, retry, fail), and tells listeners after every commit.
 */
export class Runner {
  readonly events = new EventBus();
  readonly tokens: TokenSet;
  readonly store: Store;
  /** This runner's id: the lease owner in the store, and the fence on its commits. */
  readonly owner = `runner-${randomUUID()}`;
  private readonly queue: CommitQueue;
  private readonly inflight = new Map<string, AbortController>();
  /** In-flight runs whose lease another runner took: their drives stop without committing more. */
  private readonly lost = new Set<string>();
  private readonly ctx: AttemptContext;
  private readonly now: () => number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly ownsDispatcher: boolean;
  private readonly exclusive: boolean;
  private readonly eventKeepMs: number;
  private readonly unreachable: UnreachablePolicy;
  private readonly allowedOrigins: OriginPattern[];
  private timer: NodeJS.Timeout | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private polling = false;
  private pollAgain = false;
  private stopped = true;
  private stopping: Promise<void> | undefined;

  constructor(options: RunnerOptions) {
    this.store = options.store;
    this.tokens = new TokenSet(options.tokens);
    if (this.tokens.size === 0) throw new Error('The runner needs at least one token (WF_TOKEN) to sign drive requests with.');
    this.queue = new CommitQueue(options.store);
    this.now = options.now ?? Date.now;
    this.concurrency = options.concurrency ?? 256;
    this.leaseMs = options.leaseMs ?? 15_000;
    this.pollMs = options.pollMs ?? 1_000;
    this.ownsDispatcher = !options.dispatcher;
    this.exclusive = options.exclusive ?? false;
    this.eventKeepMs = options.eventKeepMs ?? 10 * 60_000;
    this.unreachable = unreachablePolicy(options.unreachable);
    this.allowedOrigins = parseOriginPatterns(options.allowedOrigins ?? LOOPBACK_ORIGINS);
    this.ctx = {
      dispatcher: options.dispatcher ?? createAgent(options.dispatch),
      tokens: this.tokens.signing,
      now: this.now,
      driveDeadlineMs: Math.min(options.dispatch?.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS, this.leaseMs),
      inlineStepsLimitBytes: options.inlineStepsLimitBytes ?? 1024 * 1024,
      logBodyLimitBytes: options.logBodyLimitBytes ?? 64 * 1024,
      credentials: new CallCredentials(this.tokens.signing, options.redactHeaders),
      commit: (changes) => this.driveCommit(changes),
    };
  }

  /** Drive requests in flight now (for metrics). */
  get drivesInFlight(): number {
    return this.inflight.size;
  }

  /** Starts looking for due work (including runs a previous process left in flight). */
  async start(): Promise<void> {
    if (this.exclusive) await this.store.releaseAll();
    this.stopped = false;
    this.renewTimer = setInterval(() => void this.renewLeases(), Math.max(250, Math.floor(this.leaseMs / 3)));
    this.renewTimer.unref();
    this.wake();
  }

  /** Stops scheduling, gives in-flight drives `graceMs` to finish, then aborts them (their steps run again later). */
  stop(graceMs = 2_000): Promise<void> {
    // Idempotent: a second call waits for the first (closing the dispatcher twice throws).
    return (this.stopping ??= this.shutdown(graceMs));
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.renewTimer);
    const deadline = Date.now() + graceMs;
    while (this.inflight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const controller of this.inflight.values()) controller.abort();
    while (this.inflight.size > 0) await new Promise((r) => setTimeout(r, 10));
    await this.queue.drain();
    if (this.ownsDispatcher) await this.ctx.dispatcher.close();
  }

  /** Creates a run (or finds it by idempotency key) and drives it at once; only for an allowed origin. */
  async startRun(request: StartRequest): Promise<{ run: Run; created: boolean }> {
    if (!originAllowed(request.url, this.allowedOrigins)) throw new OriginNotAllowedError(request.url, this.allowedOrigins.map((p) => p.text));
    const now = this.now();
    const driveNow = !request.delayMs && !this.stopped && this.inflight.size < this.concurrency;
    const result = await this.store.createRun({
      id: newRunId(now),
      url: request.url,
      body: request.body,
      headers: this.ctx.credentials.redact(request.headers),
      retries: request.retries ?? DEFAULT_RETRIES,
      retryDelayMs: request.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
      idempotencyKey: request.idempotencyKey,
      now,
      delayMs: request.delayMs,
      // Driven at once: inserted running and leased to us, one transaction instead of three.
      lease: driveNow ? { owner: this.owner, until: now + this.leaseMs } : undefined,
    });
    if (result.created) {
      this.events.emit({ type: 'run', run: result.run });
      if (driveNow) this.launch(result.run, true);
      else this.wake();
    }
    return result;
  }

  /** Allows one more origin from now on (`wf dev` adds its tunnel's once the tunnel is open). */
  allowOrigin(pattern: string): void {
    this.allowedOrigins.push(parseOriginPattern(pattern));
  }

  /** Starts a new run with the same route, payload and headers as `runId` (dashboards' "rerun"). */
  async rerun(runId: string): Promise<Run> {
    const run = await this.store.getRun(runId);
    if (!run) throw new ApiError(404, 'NOT_FOUND', `No run with id ${runId}.`);
    return (await this.startRun({ url: run.url, body: run.body, headers: run.headers, retries: run.retries, retryDelayMs: run.retryDelayMs })).run;
  }

  /** Cancels a run that has not finished; an in-flight drive is aborted. */
  async cancelRun(runId: string): Promise<Run> {
    const run = await this.store.getRun(runId);
    if (!run) throw new ApiError(404, 'NOT_FOUND', `No run with id ${runId}.`);
    if (FINISHED_RUN_STATUSES.has(run.status)) throw new ApiError(409, 'FINISHED', `Run ${runId} is already ${run.status}.`);
    const now = this.now();
    const changes: Change[] = [
      { type: 'steps-closed', runId, status: 'cancelled', at: now },
      { type: 'run', runId, patch: { status: 'cancelled', finishedAt: now, nextAt: null }, at: now },
    ];
    // Abort before committing, in the same tick as the push: a drive that is settling queues its
    // commit before this one or, once aborted, none at all. Aborting after the commit left a window
    // in which an attempt that ended meanwhile settled the run back to running or completed.
    this.inflight.get(runId)?.abort();
    await this.commit(changes);
    return (await this.store.getRun(runId))!;
  }

  /**
   * Delivers an event to every step waiting for `eventId` and wakes their runs. When none waits yet,
   * the event is kept for `eventKeepMs` and the first wait registered for it receives it: a notify
   * sent right after the step that triggered it, before the runner saw the wait, is not lost.
   */
  async notify(eventId: string, data: unknown): Promise<{ delivered: string[]; kept: boolean }> {
    const now = this.now();
    const output = encodeValue({ eventData: data, timeout: false }, `the data of event "${eventId}"`) ?? null;
    // Kept data is wrapped, so an `undefined` comes back undefined, as when delivered at once.
    const kept = JSON.stringify({ data });
    const delivered = await this.store.deliverEvent({ eventId, data: kept, output: output ?? '', now, keepUntil: now + this.eventKeepMs });
    for (const runId of delivered) {
      const run = await this.store.getRun(runId);
      if (run) this.events.emit({ type: 'run', run });
      for (const step of await this.store.listSteps(runId)) if (step.eventId === eventId && step.finishedAt === now) this.events.emit({ type: 'step', step });
    }
    if (delivered.length > 0) this.wake();
    return { delivered, kept: delivered.length === 0 && this.eventKeepMs > 0 };
  }

  /** The committed steps a route replays from, as the drive request carries them. */
  async committedSteps(runId: string): Promise<StepRecord[]> {
    return toReplayRecords(await this.store.listSteps(runId));
  }

  /**
   * Commits changes (group-committed with other runs') and tells listeners afterwards. With `owner`
   * the store fences them by that owner's leases; API actions (cancel) pass none.
   */
  private async commit(changes: Change[], owner?: string): Promise<void> {
    await this.queue.push(changes, owner);
    if (this.events.size > 0) await announce(this.store, this.events, changes);
  }

  /**
   * A commit of a drive: fenced by this runner's lease. When the store says another runner took the
   * run over (this one stalled past its lease), that run's drive is aborted and not retried here:
   * its new holder drives it. The rejection is also handled here, so a drive's streamed commits
   * that fail before the drive awaits them (attempt.ts) are never unhandled rejections.
   */
  private driveCommit(changes: Change[]): Promise<void> {
    const committed = this.commit(changes, this.owner);
    committed.catch((error: unknown) => {
      if (!LeaseLostError.is(error)) return;
      this.leaseLost(error);
      this.reportRefusedStarts(changes);
    });
    return committed;
  }

  /**
   * The route started these steps even though fencing refused their commit (this runner had lost
   * the lease): count the executions, unfenced, without touching anything the new holder owns.
   * Rare (a stalled runner), so the extra write costs nothing on the hot path.
   */
  private reportRefusedStarts(changes: readonly Change[]): void {
    const counts = refusedStarts(changes);
    if (counts.length === 0) return;
    void this.commit(counts).catch((error: unknown) => {
      console.error('[wfkit] could not count the executions of a drive whose lease was lost:', error);
    });
  }

  private leaseLost(error: LeaseLostError): void {
    const controller = this.inflight.get(error.runId);
    if (!controller || this.lost.has(error.runId)) return;
    this.lost.add(error.runId);
    const holder = error.holder === null ? 'no runner holds it now' : `${error.holder} holds it now`;
    console.error(`[wfkit] lost the lease on run ${error.runId} (${holder}: this runner stalled past its lease); stopped driving it here, nothing more of this drive is committed.`);
    controller.abort();
  }

  private launch(run: Run, isNew: boolean): void {
    const controller = new AbortController();
    this.inflight.set(run.id, controller);
    void this.drive(run, isNew, controller.signal)
      .catch((error: unknown) => {
        // A lost lease was logged once, when the store first said so; there is nothing to release.
        if (LeaseLostError.is(error)) return true;
        console.error(`[wfkit] driving ${run.id} failed:`, error);
        return false;
      })
      .then(async (released) => {
        this.inflight.delete(run.id);
        const lost = this.lost.delete(run.id);
        if (!released && !lost) await this.store.release(run.id, this.owner).catch(() => {});
        this.wake();
      });
  }

  /**
   * Drives one run until it finishes or has to wait (retry delay, sleep, event): first whatever the
   * runner owes it (calls, due sleeps, kept events), then a drive request; `continue` loops at once.
   */
  private async drive(initial: Run, isNew: boolean, signal: AbortSignal): Promise<boolean> {
    let run = initial;
    // Not awaited: the queue keeps order, and the first drive request need not wait for this fsync.
    if (run.status === 'queued') void this.driveCommit([{ type: 'run', runId: run.id, patch: { status: 'running' }, at: this.now() }]).catch(() => {});
    for (let first = true; ; first = false) {
      if (run.failureCall === 'pending') return this.deliverFailureCall(run, signal);
      if (!(first && isNew)) {
        const parked = await this.park(run, signal);
        if (parked || signal.aborted) return false;
      }
      // A run that is driven is running, whatever woke it: a notify resolves the wait but leaves
      // the run `waiting`, and it would show so while its next steps execute.
      if (run.status === 'sleeping' || run.status === 'waiting') {
        void this.driveCommit([{ type: 'run', runId: run.id, patch: { status: 'running' }, at: this.now() }]).catch(() => {});
        run = { ...run, status: 'running' };
      }
      const committed = first && isNew ? [] : await this.committedSteps(run.id);
      const result = await runAttempt(this.ctx, run, committed, signal);
      if (signal.aborted) return this.aborted(run, result.attempt);
      const now = this.now();
      const { changes, patch } = settle(run, result, now, Math.random, this.unreachable);
      // Due now: a `continue`, a resolved suspension, or a failed run's failureFunction call.
      const again = patch.nextAt !== undefined && patch.nextAt !== null && patch.nextAt <= now && !this.stopped;
      // When the drive ends here, the lease goes back in the same transaction (one fsync fewer).
      const release: Change[] = again ? [] : [{ type: 'release', runId: run.id, owner: this.owner }];
      await this.driveCommit([...changes, { type: 'attempt', attempt: result.attempt }, { type: 'run', runId: run.id, patch, at: now }, ...release]);
      run = { ...run, ...patch, updatedAt: now };
      if (!again) return true;
    }
  }

  /**
   * Resolves the run's pending sleeps, waits and calls; true when the run must wait (it is then
   * parked as sleeping or waiting until its next wake-up, or a notify).
   */
  private async park(run: Run, signal: AbortSignal): Promise<boolean> {
    const resolveContext = { store: this.store, dispatcher: this.ctx.dispatcher, now: this.now, commit: (c: Change[]) => this.driveCommit(c), credentials: this.ctx.credentials };
    const parking = await resolvePending(resolveContext, run, signal);
    if (!parking) return false;
    await this.driveCommit([{ type: 'run', runId: run.id, patch: parking.patch, at: this.now() }]);
    // A notify that landed between reading the steps and this commit resolved a wait and made the
    // run due, which the patch just undid: if fewer steps pend now, drive at once.
    if (pendingSteps(await this.store.listSteps(run.id)).length >= parking.pending) return true;
    await this.driveCommit([{ type: 'run', runId: run.id, patch: { status: 'running' }, at: this.now() }]);
    return false;
  }

  /**
   * An attempt cut short by an abort: another runner holds the run now (its attempts count on from
   * the store, not from us), or it was cancelled, or the runner is stopping: keep the log and leave
   * the run's state alone except the attempt count, which the log entry's `seq` took.
   */
  private async aborted(run: Run, attempt: Attempt): Promise<boolean> {
    if (this.lost.has(run.id)) return true;
    await this.driveCommit([
      { type: 'attempt', attempt: { ...attempt, outcome: 'aborted' } },
      { type: 'run', runId: run.id, patch: { attempts: run.attempts + 1 }, at: this.now() },
    ]);
    return false;
  }

  /**
   * Delivers a failed run's failureFunction call (durably: the run was committed `failed` with the
   * call `pending` first, so a crash in between delivers it after the restart). Each delivery is an
   * attempt in the run's log; `settleFailureCall` decides whether and when to try again.
   */
  private async deliverFailureCall(initial: Run, signal: AbortSignal): Promise<boolean> {
    let run = initial;
    for (;;) {
      const failure = failureRequest(run, await this.store.listSteps(run.id));
      const result = await runAttempt(this.ctx, run, [], signal, failure);
      if (signal.aborted) return this.aborted(run, result.attempt);
      const now = this.now();
      const patch = settleFailureCall(run, result, now, Math.random, this.unreachable);
      const again = patch.nextAt !== undefined && patch.nextAt !== null && patch.nextAt <= now && !this.stopped;
      const release: Change[] = again ? [] : [{ type: 'release', runId: run.id, owner: this.owner }];
      await this.driveCommit([{ type: 'attempt', attempt: result.attempt }, { type: 'run', runId: run.id, patch, at: now }, ...release]);
      run = { ...run, ...patch, updatedAt: now };
      if (!again) return true;
    }
  }

  /** Looks for due work now (coalesced), then sleeps until the next due time or `pollMs`. */
  wake(): void {
    if (this.stopped) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    void this.poll().finally(() => {
      this.polling = false;
      if (this.pollAgain) {
        this.pollAgain = false;
        this.wake();
      }
    });
  }

  private async poll(): Promise<void> {
    clearTimeout(this.timer);
    try {
      const free = this.concurrency - this.inflight.size;
      if (free > 0) {
        const runs = await this.store.claimDue({ now: this.now(), limit: free, owner: this.owner, leaseMs: this.leaseMs });
        for (const run of runs) if (!this.inflight.has(run.id)) this.launch(run, false);
      }
      // At capacity, a finishing drive wakes us; otherwise sleep until the next due time.
      const next = free > 0 ? await this.store.nextDueAt() : null;
      const delay = next === null ? this.pollMs : Math.min(this.pollMs, Math.max(0, next - this.now()));
      if (!this.stopped) this.timer = setTimeout(() => this.wake(), delay);
    } catch (error) {
      console.error('[wfkit] scheduler poll failed:', error);
      if (!this.stopped) this.timer = setTimeout(() => this.wake(), this.pollMs);
    }
  }

  private async renewLeases(): Promise<void> {
    if (this.inflight.size === 0) return;
    await this.store.renew([...this.inflight.keys()], this.owner, this.now() + this.leaseMs).catch((error: unknown) => {
      console.error('[wfkit] lease renewal failed:', error);
    });
  }
}
