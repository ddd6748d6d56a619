import { randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';
import type { StartRequest, StepRecord } from '../protocol/messages.js';
import { runAttempt, type AttemptContext } from './attempt.js';
import { CommitQueue } from './commit-queue.js';
import { createAgent, type DispatchOptions } from './dispatch.js';
import { ApiError } from './errors.js';
import { EventBus } from './events.js';
import { newRunId } from './ids.js';
import { DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_MS } from './retry.js';
import { settle } from './settle.js';
import { FINISHED_RUN_STATUSES, type Change, type Run, type Step, type Store } from './store/types.js';
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
  /** This runner is the store's only user (SQLite): take over leftover leases on start. @default false */
  exclusive?: boolean;
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
  private readonly owner = `runner-${randomUUID()}`;
  private readonly queue: CommitQueue;
  private readonly inflight = new Map<string, AbortController>();
  private readonly ctx: AttemptContext;
  private readonly now: () => number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly ownsDispatcher: boolean;
  private readonly exclusive: boolean;
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
    this.ctx = {
      dispatcher: options.dispatcher ?? createAgent(options.dispatch),
      tokens: this.tokens.signing,
      now: this.now,
      inlineStepsLimitBytes: options.inlineStepsLimitBytes ?? 1024 * 1024,
      logBodyLimitBytes: options.logBodyLimitBytes ?? 64 * 1024,
      commit: (changes) => this.commit(changes),
    };
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

  /** Creates a run (or finds it by idempotency key) and drives it at once. */
  async startRun(request: StartRequest): Promise<{ run: Run; created: boolean }> {
    const now = this.now();
    const result = await this.store.createRun({
      id: newRunId(now),
      url: request.url,
      body: request.body,
      headers: request.headers,
      retries: request.retries ?? DEFAULT_RETRIES,
      retryDelayMs: request.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
      idempotencyKey: request.idempotencyKey,
      now,
    });
    if (result.created) {
      this.events.emit({ type: 'run', run: result.run });
      if (!this.stopped && this.inflight.size < this.concurrency) {
        const claimed = await this.store.claim(result.run.id, { now, owner: this.owner, leaseMs: this.leaseMs });
        if (claimed) this.launch(claimed, true);
      } else this.wake();
    }
    return result;
  }

  /** Cancels a run that has not finished; an in-flight drive is aborted. */
  async cancelRun(runId: string): Promise<Run> {
    const run = await this.store.getRun(runId);
    if (!run) throw new ApiError(404, 'NOT_FOUND', `No run with id ${runId}.`);
    if (FINISHED_RUN_STATUSES.has(run.status)) throw new ApiError(409, 'FINISHED', `Run ${runId} is already ${run.status}.`);
    const now = this.now();
    const changes: Change[] = [{ type: 'run', runId, patch: { status: 'cancelled', finishedAt: now, nextAt: null }, at: now }];
    // Abort before committing, in the same tick as the push: a drive that is settling queues its
    // commit before this one or, once aborted, none at all. Aborting after the commit left a window
    // in which an attempt that ended meanwhile settled the run back to running or completed.
    this.inflight.get(runId)?.abort();
    await this.commit(changes);
    return (await this.store.getRun(runId))!;
  }

  /** The committed steps a route replays from, as the drive request carries them. */
  async committedSteps(runId: string): Promise<StepRecord[]> {
    const records: StepRecord[] = [];
    for (const step of await this.store.listSteps(runId)) {
      // Only an unbroken prefix replays: position i must hold step i.
      if (step.status !== 'succeeded' || step.index !== records.length) break;
      const record: StepRecord = { index: step.index, name: step.name, kind: step.kind };
      if (step.output !== null) record.output = step.output;
      records.push(record);
    }
    return records;
  }

  /** Commits changes (group-committed with other runs') and tells listeners afterwards. */
  private async commit(changes: Change[]): Promise<void> {
    await this.queue.push(changes);
    if (this.events.size === 0) return;
    const touched = new Set(changes.map((c) => (c.type === 'attempt' ? c.attempt.runId : c.runId)));
    for (const change of changes) if (change.type === 'attempt') this.events.emit({ type: 'attempt', attempt: change.attempt });
    for (const runId of touched) {
      const steps = changes.some((c) => c.type.startsWith('step-') && 'index' in c && c.runId === runId) ? await this.store.listSteps(runId) : [];
      const indexes = new Set(changes.flatMap((c) => (c.type.startsWith('step-') && 'index' in c && c.runId === runId ? [c.index] : [])));
      for (const step of steps) if (indexes.has(step.index)) this.events.emit({ type: 'step', step: step as Step });
      if (changes.some((c) => c.type === 'run' && c.runId === runId)) {
        const run = await this.store.getRun(runId);
        if (run) this.events.emit({ type: 'run', run });
      }
    }
  }

  private launch(run: Run, isNew: boolean): void {
    const controller = new AbortController();
    this.inflight.set(run.id, controller);
    void this.drive(run, isNew, controller.signal)
      .catch((error: unknown) => console.error(`[wfkit] driving ${run.id} failed:`, error))
      .finally(() => {
        this.inflight.delete(run.id);
        void this.store.release(run.id, this.owner).finally(() => this.wake());
      });
  }

  /** Drives one run until it finishes or has to wait (retry delay); `continue` loops at once. */
  private async drive(initial: Run, isNew: boolean, signal: AbortSignal): Promise<void> {
    let run = initial;
    let committed: StepRecord[] = isNew ? [] : await this.committedSteps(run.id);
    // Not awaited: the queue keeps order, and the first drive request need not wait for this fsync.
    if (run.status === 'queued') void this.commit([{ type: 'run', runId: run.id, patch: { status: 'running' }, at: this.now() }]).catch(() => {});
    for (;;) {
      const result = await runAttempt(this.ctx, run, committed, signal);
      if (signal.aborted) {
        // Cancelled, or the runner is stopping: keep the log, leave the run's state alone except
        // the attempt count, which the log entry's `seq` took (the next attempt must not reuse it).
        const at = this.now();
        await this.commit([
          { type: 'attempt', attempt: { ...result.attempt, outcome: 'aborted' } },
          { type: 'run', runId: run.id, patch: { attempts: run.attempts + 1 }, at },
        ]);
        return;
      }
      const now = this.now();
      const { changes, patch } = settle(run, result, now);
      await this.commit([...changes, { type: 'attempt', attempt: result.attempt }, { type: 'run', runId: run.id, patch, at: now }]);
      run = { ...run, ...patch, updatedAt: now };
      if (run.status !== 'running' || run.nextAt === null || run.nextAt > now || this.stopped) return;
      committed = await this.committedSteps(run.id);
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
