import type { StartRequest, StepRecord } from '../protocol/messages.js';
import { encodeValue } from '../protocol/values.js';
import type { CallCredentials } from './drive/call-credentials.js';
import type { Commit } from './commit/commit-queue.js';
import { StartBatch } from './commit/start-batch.js';
import {
  OriginNotAllowedError,
  RunFinishedError,
  RunNotFoundError,
  RunNotResumableError,
  UpstashRunActionError,
} from './errors.js';
import type { EventBus } from './commit/events.js';
import { newRunId } from './ids.js';
import { childRunIdOf, parentOf } from './drive/invoke.js';
import { originAllowed, parseOriginPattern, type OriginPattern } from './egress/origins.js';
import { toReplayRecords } from './drive/replay-records.js';
import { DEFAULT_RETRIES, DEFAULT_RETRY_DELAY_MS } from './drive/retry.js';
import type { Scheduler } from './background/scheduler.js';
import { FINISHED_RUN_STATUSES, type Run, type Store } from './store/types.js';
import { cancellation } from './run-end/end.js';
import type { RunEnds } from './run-end/run-ends.js';

export interface ActionsOptions {
  store: Store;
  events: EventBus;
  owner: string;
  now: () => number;
  leaseMs: number;
  eventKeepMs: number;
  credentials: CallCredentials;
  allowedOrigins: OriginPattern[];
  scheduler: Scheduler;
  commit: Commit;
  /** How a run ends (run-end/): a cancel is committed there, and what follows it done there. */
  ends: RunEnds;
}

/**
 * What the API (and `wf dev`, tests) asks of the runner: start, rerun, cancel, notify, and the
 * committed steps a route replays from. Not fenced by leases; they throw domain errors
 * (`RunNotFoundError`, `RunFinishedError`, `OriginNotAllowedError`) the API maps to statuses.
 */
export class RunnerActions {
  private readonly options: ActionsOptions;
  private readonly starts: StartBatch;

  constructor(options: ActionsOptions) {
    this.options = options;
    this.starts = new StartBatch(options.store);
  }

  /** Creates a run (or finds it by idempotency key) and drives it at once; only for an allowed origin. */
  async startRun(request: StartRequest): Promise<{ run: Run; created: boolean }> {
    const { events, owner, leaseMs, credentials, allowedOrigins, scheduler } = this.options;
    if (!originAllowed(request.url, allowedOrigins))
      throw new OriginNotAllowedError(
        request.url,
        allowedOrigins.map((p) => p.text),
      );
    const now = this.options.now();
    // A flow-controlled run always goes through claimDue, which alone counts its key's slots.
    // Its slot is held while the run is committed (in a batch with other starts: StartBatch).
    const driveNow = !request.delayMs && !request.flowControl && scheduler.reserve();
    const result = await this.starts
      .create({
        id: newRunId(now),
        url: request.url,
        body: request.body,
        headers: credentials.redact(request.headers),
        retries: request.retries ?? DEFAULT_RETRIES,
        retryDelayMs: request.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS,
        idempotencyKey: request.idempotencyKey,
        now,
        delayMs: request.delayMs,
        flowControl: request.flowControl,
        // Driven at once: inserted running and leased to us, one transaction instead of three.
        lease: driveNow ? { owner, until: now + leaseMs } : undefined,
      })
      .finally(() => {
        if (driveNow) scheduler.unreserve();
      });
    if (result.created && driveNow) {
      // The drive request first, the run's event a turn later (EventBus.emitSoon): the path to the
      // run's end waits for the drive, nobody waits for the event.
      scheduler.launch({ run: result.run, isNew: true });
      events.emitSoon({ type: 'run', run: result.run });
    } else if (result.created) {
      events.emit({ type: 'run', run: result.run });
      scheduler.wake();
    }
    return result;
  }

  /** Allows one more origin from now on (`wf dev` adds its tunnel's once the tunnel is open). */
  allowOrigin(pattern: string): void {
    this.options.allowedOrigins.push(parseOriginPattern(pattern));
  }

  /** Starts a new run with the same route, payload, headers and flow control as `runId` (dashboards' "rerun"). */
  async rerun(runId: string): Promise<Run> {
    const run = await this.options.store.getRun(runId);
    if (!run) throw new RunNotFoundError(runId);
    if (run.protocol === 'upstash') throw new UpstashRunActionError(runId, 'rerun');
    const start: StartRequest = {
      url: run.url,
      body: run.body,
      headers: run.headers,
      retries: run.retries,
      retryDelayMs: run.retryDelayMs,
    };
    if (run.flowControl !== undefined) start.flowControl = run.flowControl;
    return (await this.startRun(start)).run;
  }

  /**
   * Cancels a run that has not finished; an in-flight drive is aborted. The end is run-end's (its
   * trace, its parent woken, an Upstash run's messages dropped and its invoker answered); then the
   * children it invoked are cancelled too.
   */
  async cancelRun(runId: string): Promise<Run> {
    const { store, scheduler, ends } = this.options;
    const run = await store.getRun(runId);
    if (!run) throw new RunNotFoundError(runId);
    if (FINISHED_RUN_STATUSES.has(run.status)) throw new RunFinishedError(runId, run.status);
    const now = this.options.now();
    // Abort before committing, in the same tick as the push: a drive that is settling queues its
    // commit before this one or, once aborted, none at all. Aborting after the commit left a window
    // in which an attempt that ended meanwhile settled the run back to running or completed.
    scheduler.abort(runId);
    const cancelled = await ends.end(runId, cancellation(runId, now), now);
    await this.cancelChildren(runId);
    return cancelled;
  }

  /** Cancels the unfinished children a run invoked (and theirs, through `cancelRun`). */
  private async cancelChildren(runId: string): Promise<void> {
    for (const step of await this.options.store.listSteps(runId)) {
      const childId = childRunIdOf(step);
      if (childId === undefined) continue;
      const child = await this.options.store.getRun(childId);
      if (!child || FINISHED_RUN_STATUSES.has(child.status)) continue;
      try {
        await this.cancelRun(childId);
      } catch (error) {
        // Finished meanwhile (it ended on its own between the read and the cancel): nothing to do.
        if (!(error instanceof RunFinishedError)) throw error;
      }
    }
  }

  /**
   * A child run ended: make its parent due now, so it resolves its invoke step without waiting for
   * the poll. Unfenced like every action: it only moves `nextAt` of an unfinished run.
   */
  async childEnded(child: Run): Promise<void> {
    const link = parentOf(child);
    if (!link) return;
    const parent = await this.options.store.getRun(link.parentRunId);
    // An @upstash/workflow parent hears of its child through the QStash engine, never through nextAt
    // (the native scheduler must not drive it).
    if (!parent || FINISHED_RUN_STATUSES.has(parent.status) || parent.protocol === 'upstash') return;
    const now = this.options.now();
    await this.options.commit([{ type: 'run', runId: parent.id, patch: { nextAt: now }, at: now }]);
    this.options.scheduler.wake();
  }

  /**
   * Starts a failed or cancelled run again at the step that did not succeed: its succeeded steps are
   * kept (the route replays them, they do not run again), the others are cleared and run again.
   */
  async resumeRun(runId: string): Promise<Run> {
    const { store, events, scheduler } = this.options;
    // Checked first: resuming in the store would make the run due for the native scheduler.
    if ((await store.getRun(runId))?.protocol === 'upstash') throw new UpstashRunActionError(runId, 'resume');
    const result = await store.resumeRun(runId, this.options.now());
    if (!result) throw new RunNotFoundError(runId);
    if (!result.resumed) throw new RunNotResumableError(runId, result.run.status);
    if (events.size > 0) events.emit({ type: 'run', run: result.run });
    scheduler.wake();
    return result.run;
  }

  /**
   * Delivers an event to every step waiting for `eventId` and wakes their runs. When none waits yet,
   * the event is kept for `eventKeepMs` and the first wait registered for it receives it: a notify
   * sent right after the step that triggered it, before the runner saw the wait, is not lost.
   */
  async notify(eventId: string, data: unknown): Promise<{ delivered: string[]; kept: boolean }> {
    const { store, events, eventKeepMs, scheduler } = this.options;
    const now = this.options.now();
    const output = encodeValue({ eventData: data, timeout: false }, `the data of event "${eventId}"`) ?? null;
    // Kept data is wrapped, so an `undefined` comes back undefined, as when delivered at once.
    const kept = JSON.stringify({ data });
    const delivered = await store.deliverEvent({
      eventId,
      data: kept,
      output: output ?? '',
      now,
      keepUntil: now + eventKeepMs,
    });
    // Read back only for listeners: a notify nobody watches costs its one transaction.
    for (const runId of events.size > 0 ? delivered : []) {
      const run = await store.getRun(runId);
      if (run) events.emit({ type: 'run', run });
      for (const step of await store.listSteps(runId))
        if (step.eventId === eventId && step.finishedAt === now) events.emit({ type: 'step', step });
    }
    if (delivered.length > 0) scheduler.wake();
    return { delivered, kept: delivered.length === 0 && eventKeepMs > 0 };
  }

  /** The committed steps a route replays from, as the drive request carries them. */
  async committedSteps(runId: string): Promise<StepRecord[]> {
    return toReplayRecords(await this.options.store.listSteps(runId));
  }
}
