import type { StartRequest, StepRecord } from '../../protocol/messages.js';
import type { AlertConfig } from '../alerts/options.js';
import type { Commit } from '../commit/commit-queue.js';
import { runAttempt, type AttemptContext, type AttemptResult } from './attempt.js';
import { isFull, SLOT_RECHECK_MS } from '../egress/slots.js';
import { describeError, type Logger } from '../telemetry/logger.js';
import { refusedStarts } from './refused-starts.js';
import { toReplayRecords } from './replay-records.js';
import type { DriveTask, Scheduler } from '../background/scheduler.js';
import type { UpstashAttemptSeq } from '../run-end/attempt-numbers.js';
import { deliverOwed, type DeliveriesContext } from '../run-end/deliveries.js';
import type { RunEnds } from '../run-end/run-ends.js';
import { settle } from './settle.js';
import { LeaseLostError } from '../store/errors.js';
import { FINISHED_RUN_STATUSES, type Attempt, type Change, type Run, type Step, type Store } from '../store/types.js';
import { runnerKind } from '../step-kinds/index.js';
import { pendingSteps, resolvePending } from './suspensions.js';
import type { UnreachablePolicy } from './unreachable.js';

export interface DriverOptions {
  store: Store;
  owner: string;
  now: () => number;
  /** The attempt context, without `commit` (the driver supplies its fenced commit). */
  attempt: Omit<AttemptContext, 'commit'>;
  unreachable: UnreachablePolicy;
  scheduler: Scheduler;
  commit: Commit;
  logger: Logger;
  /** Child workflows: start one (the normal start path). */
  children: { start: (request: StartRequest) => Promise<{ run: Run }> };
  /** What follows a run's end (its trace, its parent woken): run-end/run-ends.ts. */
  ends: RunEnds;
  /** Failure alerts (`--alert-webhook`); undefined when none is set: no run then owes one. */
  alerts?: AlertConfig;
  /**
   * Takes the next attempt number of an Upstash-protocol run from the counter its QStash engine
   * numbers deliveries with (`MessageStore.nextAttemptSeq`): that run's failure callback may be
   * delivered, and logged, while this driver sends its alert, so `run.attempts + 1` could be taken.
   */
  upstashAttemptSeq?: UpstashAttemptSeq;
  /** Runs deferred for want of a slot at their origin (the dashboards show why they wait). */
  onWaitingForSlot?: (runIds: string[]) => void;
}

/**
 * One run's drive: what the runner owes it first (park or resolve), then a drive request whose
 * streamed steps are committed as they come, then the settled outcome, committed with the
 * attempt's log (and the lease's release when the drive ends there). Also a failed run's
 * deliveries, its alert and its failureFunction call, side by side (run-end/deliveries.ts). Every
 * commit is fenced by this runner's lease.
 */
export class Driver {
  private readonly ctx: AttemptContext;

  private readonly deliveries: DeliveriesContext;

  private readonly options: DriverOptions;

  constructor(options: DriverOptions) {
    this.options = options;
    this.ctx = { ...options.attempt, commit: (changes) => this.commit(changes) };
    const { store, owner, now, unreachable, scheduler, alerts, upstashAttemptSeq } = options;
    this.deliveries = { store, owner, now, unreachable, scheduler, attempt: this.ctx, alerts, upstashAttemptSeq };
  }

  /**
   * A commit of a drive: fenced by this runner's lease. When the store says another runner took the
   * run over (this one stalled past its lease), that run's drive is aborted and not retried here:
   * its new holder drives it. The rejection is also handled here, so a drive's streamed commits
   * that fail before the drive awaits them (attempt.ts) are never unhandled rejections; the drive
   * awaits every one before it settles, so any other failure ends the drive (logged, released).
   */
  commit(changes: Change[]): Promise<void> {
    const committed = this.options.commit(changes, this.options.owner);
    committed.catch((error: unknown) => {
      if (!LeaseLostError.is(error)) return;
      this.options.scheduler.lose(error);
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
    const runId = counts[0]!.type === 'attempt' ? undefined : counts[0]!.runId;
    void this.options.commit(counts).catch((error: unknown) => {
      this.options.logger.error(
        `could not count the executions of a drive whose lease was lost: ${describeError(error)}`,
        { runId },
      );
    });
  }

  /** Marks a run running without waiting for the fsync; the drive awaits it before it settles. */
  private markRunning(run: Run): Promise<void> {
    return this.commit([{ type: 'run', runId: run.id, patch: { status: 'running' }, at: this.options.now() }]);
  }

  /**
   * Drives one run until it finishes or has to wait (retry delay, sleep, event): first whatever the
   * runner owes it (calls, due sleeps, kept events), then a drive request; `continue` loops at once.
   * True when the lease was released with the last commit.
   */
  async drive({ run: initial, isNew, signal }: DriveTask): Promise<boolean> {
    const { store, now, owner, unreachable, scheduler } = this.options;
    // An Upstash-protocol run is its QStash engine's: this driver only delivers what a finished run
    // owes (its alert). Claimed for anything else (never expected: its `next_at` is NULL but for an
    // owed alert), it is put back unscheduled rather than sent a drive request the SDK cannot read.
    if (initial.protocol === 'upstash') return deliverOwed(this.deliveries, initial, signal);
    let run = initial;
    // Not awaited yet: the queue keeps order, and the drive request need not wait for this fsync.
    // Awaited before the settle commit, so a failed mark ends the drive instead of vanishing.
    // (Each mark's rejection is handled in `commit`, so none is unhandled while the attempt runs.)
    const marks: Promise<void>[] = run.status === 'queued' ? [this.markRunning(run)] : [];
    for (let first = true; ; first = false) {
      // A failed run's alert and failureFunction call (a run that ended still claimable owes one).
      if (FINISHED_RUN_STATUSES.has(run.status)) return deliverOwed(this.deliveries, run, signal);
      if (!(first && isNew)) {
        const parked = await this.park(run, signal);
        if (parked || signal.aborted) {
          await Promise.all(marks);
          return false;
        }
      }
      // A run that is driven is running, whatever woke it: a notify resolves the wait but leaves
      // the run `waiting`, and it would show so while its next steps execute.
      if (run.status === 'sleeping' || run.status === 'waiting') {
        marks.push(this.markRunning(run));
        run = { ...run, status: 'running' };
      }
      const committed = first && isNew ? [] : toReplayRecords(await store.listSteps(run.id));
      const result = await this.attempt(run, committed, signal);
      await Promise.all(marks.splice(0));
      if (result === 'deferred') return this.deferForSlot(run);
      const held = result.held ?? [];
      if (signal.aborted) return this.aborted(run, result.attempt, held);
      const at = now();
      // A failing run owes its alert and failureFunction call in this same commit (run-end/end.ts).
      const { changes, patch } = settle(run, result, {
        now: at,
        unreachable,
        alerts: this.options.alerts !== undefined,
      });
      // Due now: a `continue`, a resolved suspension, or a failed run's deliveries.
      const again = patch.nextAt !== undefined && patch.nextAt !== null && patch.nextAt <= at && !scheduler.stopped;
      // When the drive ends here, the lease goes back in the same transaction (one fsync fewer).
      const release: Change[] = again ? [] : [{ type: 'release', runId: run.id, owner }];
      // The steps that came with the terminal line first: the end and its last steps in one fsync.
      await this.commit([
        ...held,
        ...changes,
        { type: 'attempt', attempt: result.attempt },
        { type: 'run', runId: run.id, patch, at },
        ...release,
      ]);
      const ended = patch.status !== undefined && FINISHED_RUN_STATUSES.has(patch.status);
      run = { ...run, ...patch, updatedAt: at };
      if (ended) await this.options.ends.ended({ run, at });
      if (!again) return true;
    }
  }

  /**
   * A drive request in a slot at the run's origin; `'deferred'` when this runner already has its
   * share in flight there (`egress.perAppOrigin`): the run is then deferred, not waited for here.
   */
  private async attempt(
    run: Run,
    committed: readonly StepRecord[],
    signal: AbortSignal,
  ): Promise<AttemptResult | 'deferred'> {
    const slot = this.ctx.egress.acquire(new URL(run.url), 'drive', run.id);
    if (isFull(slot)) {
      if (slot.newlyWaiting) this.options.onWaitingForSlot?.([run.id]);
      return 'deferred';
    }
    try {
      return await runAttempt(this.ctx, { slot, run, committed, signal, holdLast: true });
    } finally {
      slot.release();
    }
  }

  /**
   * A run whose origin had no free slot: due again shortly and released, so it holds none of the
   * scheduler's slots while it waits, and spends no retries. Dashboards hear of it as waiting.
   */
  private async deferForSlot(run: Run): Promise<boolean> {
    const { owner, now } = this.options;
    const at = now();
    await this.commit([
      { type: 'run', runId: run.id, patch: { nextAt: at + SLOT_RECHECK_MS }, at },
      { type: 'release', runId: run.id, owner },
    ]);
    return true;
  }

  /** Whether a step among `pending` was resolved without a wake, e.g. an invoked child that ended (its kind says). */
  private async endedMeanwhile(pending: readonly Step[]): Promise<boolean> {
    for (const step of pending) if (await runnerKind(step.kind)!.endedMeanwhile(this.options.store, step)) return true;
    return false;
  }

  /**
   * Resolves the run's pending sleeps, waits and calls; true when the run must wait (it is then
   * parked as sleeping or waiting until its next wake-up, or a notify).
   */
  private async park(run: Run, signal: AbortSignal): Promise<boolean> {
    const { store, now } = this.options;
    const resolveContext = {
      store,
      egress: this.ctx.egress,
      onWaitingForSlot: this.options.onWaitingForSlot,
      now,
      commit: (c: Change[]) => this.commit(c),
      credentials: this.ctx.credentials,
      startRun: this.options.children.start,
      tracing: this.ctx.tracing,
    };
    const parking = await resolvePending(resolveContext, run, signal);
    if (!parking) return false;
    await this.commit([{ type: 'run', runId: run.id, patch: parking.patch, at: now() }]);
    // A notify that landed between reading the steps and this commit resolved a wait and made the
    // run due, which the patch just undid: if fewer steps pend now, drive at once.
    const pending = pendingSteps(await store.listSteps(run.id));
    // Likewise a child that ended meanwhile: its wake came before this patch and was undone.
    if (pending.length >= parking.pending && !(await this.endedMeanwhile(pending))) return true;
    await this.markRunning(run);
    return false;
  }

  /**
   * An attempt cut short by an abort: another runner holds the run now (its attempts count on from
   * the store, not from us), or it was cancelled, or the runner is stopping: keep the log and leave
   * the run's state alone except the attempt count, which the log entry's `seq` took.
   */
  private async aborted(run: Run, attempt: Attempt, held: readonly Change[]): Promise<boolean> {
    // Another runner holds the run: the steps that came with the terminal line would be refused
    // by fencing, so only their starts are counted, as for any refused commit of a drive.
    if (this.options.scheduler.isLost(run.id)) {
      this.reportRefusedStarts(held);
      return true;
    }
    // Otherwise they are committed first in the same commit as the log, as they would have been on their own.
    await this.commit([
      ...held,
      { type: 'attempt', attempt: { ...attempt, outcome: 'aborted' } },
      { type: 'run', runId: run.id, patch: { attempts: run.attempts + 1 }, at: this.options.now() },
    ]);
    return false;
  }
  /** Runs deferred for want of a slot at their origin (the dashboards show why they wait). */
  onWaitingForSlot?: (runIds: string[]) => void;
}
