import { randomUUID } from 'node:crypto';
import type { NewScheduleRequest, Schedule, ScheduleRefusal } from '../../api/schedule-dto.js';
import type { StartRequest } from '../../protocol/messages.js';
import { OriginNotAllowedError } from '../errors.js';
import { describeError, type Logger } from '../telemetry/logger.js';
import { originAllowed, type OriginPattern } from '../egress/origins.js';
import { nextDelay, type RetryPolicy } from '../drive/retry.js';
import type { Run, ScheduleStore } from '../store/types.js';
import { checkCronFields, nextTick } from './cron.js';

export interface ScheduleServiceOptions {
  store: ScheduleStore;
  now: () => number;
  allowedOrigins: readonly OriginPattern[];
  redact: (headers: Record<string, string>) => Record<string, string>;
  startRun: (request: StartRequest) => Promise<{ run: Run; created: boolean }>;
  logger: Logger;
  /** How often the ticker looks for due schedules. */
  tickMs: number;
}

/**
 * How long a tick that failed for a passing reason (the store, a busy database) waits before it is
 * tried again: 1 s doubling up to a minute, with jitter (`retries` is not used: it is tried until it fires).
 */
export const TICK_RETRY: RetryPolicy = { retries: 0, baseMs: 1_000, maxMs: 60_000 };

/** A tick that failed for a passing reason: which one, how often so far, and when to try it again. */
interface TickRetry {
  tick: number;
  failures: number;
  at: number;
}

/**
 * Why a tick may be refused for good: its route's origin is no longer allowed. That does not pass
 * by itself (the operator changes the list and restarts), so retrying the tick would only spin.
 */
function lastingRefusal(error: unknown): { code: string; message: string } | undefined {
  return error instanceof OriginNotAllowedError ? { code: 'ORIGIN_NOT_ALLOWED', message: error.message } : undefined;
}

/** The idempotency key of a tick's run: what makes a tick fire once across runners and restarts. */
export function tickKey(scheduleId: string, tickAt: number): string {
  return `schedule:${scheduleId}:${tickAt}`;
}

/** The schedule a run's idempotency key names, or null (runs not started by a schedule). */
export function scheduleIdOf(idempotencyKey: string | null): string | null {
  const match = idempotencyKey?.match(/^schedule:(wfs_[A-Za-z0-9-]+):\d+$/);
  return match?.[1] ?? null;
}

/**
 * Cron schedules: creates them (checked: cron, zone, allowed origin) and fires due ticks. Its timer
 * is its own, apart from the run scheduler's poll, so runs that use no schedule pay nothing more
 * than one indexed query per `tickMs`.
 */
export class ScheduleService {
  private readonly options: ScheduleServiceOptions;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  /** Ticks backing off after a passing failure, by schedule. */
  private readonly retrying = new Map<string, TickRetry>();
  /** Schedules whose refusal was logged: once per schedule, until one of its ticks fires again. */
  private readonly refusalLogged = new Set<string>();

  constructor(options: ScheduleServiceOptions) {
    this.options = options;
  }

  async create(request: NewScheduleRequest): Promise<Schedule> {
    const { store, now, allowedOrigins, redact } = this.options;
    if (!originAllowed(request.url, allowedOrigins))
      throw new OriginNotAllowedError(
        request.url,
        allowedOrigins.map((p) => p.text),
      );
    checkCronFields(request.cron);
    const timezone = request.timezone ?? 'UTC';
    const createdAt = now();
    const schedule: Schedule = {
      id: `wfs_${randomUUID()}`,
      url: request.url,
      cron: request.cron.trim(),
      timezone,
      body: request.body ?? '',
      headers: redact(request.headers ?? {}),
      nextAt: nextTick(request.cron.trim(), timezone, createdAt),
      lastFiredAt: null,
      lastRefusal: null,
      createdAt,
    };
    await store.createSchedule(schedule);
    return schedule;
  }

  start(): void {
    const loop = (): void => {
      this.ticking = this.tick().finally(() => {
        if (this.timer !== undefined) this.timer = setTimeout(loop, this.options.tickMs);
      });
    };
    this.timer = setTimeout(loop, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  /**
   * Fires every due tick once: the run first (keyed `schedule:<id>:<tick>`, so a runner killed
   * before advancing, or two racing, still start one run), then the compare-and-set advance to
   * the next tick after *now*: after downtime only the one missed tick fires, not a storm. A tick
   * refused for good is skipped (`refuse`); one that failed otherwise waits its backoff (`TICK_RETRY`).
   */
  async tick(): Promise<void> {
    const { store, now, logger } = this.options;
    try {
      const at = now();
      // Ticks backing off stay due: asked for on top of the 50, so they cannot crowd the others out.
      const due = await store.dueSchedules(at, 50 + this.retrying.size);
      const dueIds = new Set(due.map((s) => s.id));
      for (const id of this.retrying.keys()) if (!dueIds.has(id)) this.retrying.delete(id); // fired elsewhere, or deleted
      for (const schedule of due) {
        const retry = this.retrying.get(schedule.id);
        if (retry !== undefined && retry.tick === schedule.nextAt && retry.at > at) continue;
        await this.fire(schedule);
      }
    } catch (error) {
      logger.error(`looking for due schedules failed: ${describeError(error)}`);
    }
  }

  private async fire(schedule: Schedule): Promise<void> {
    const { store, now, startRun, logger } = this.options;
    try {
      const { run, created } = await startRun({
        url: schedule.url,
        body: schedule.body,
        headers: schedule.headers,
        idempotencyKey: tickKey(schedule.id, schedule.nextAt),
      });
      // Only the runner whose start created the run says so: one line per tick across runners.
      if (created)
        logger.info(
          `schedule ${schedule.id} fired its tick at ${new Date(schedule.nextAt).toISOString()}: run ${run.id}`,
          { scheduleId: schedule.id, runId: run.id },
        );
      const firedAt = now();
      await store.advanceSchedule(schedule.id, schedule.nextAt, this.following(schedule, firedAt), firedAt);
      this.retrying.delete(schedule.id);
      this.refusalLogged.delete(schedule.id);
    } catch (error) {
      const refusal = lastingRefusal(error);
      if (refusal) await this.refuse(schedule, refusal);
      else this.backOff(schedule, error);
    }
  }

  /** Skips a tick refused for good: recorded as the schedule's `lastRefusal`, the schedule moved to its next tick, logged once per schedule. */
  private async refuse(schedule: Schedule, reason: { code: string; message: string }): Promise<void> {
    const { store, now, logger } = this.options;
    const at = now();
    const refusal: ScheduleRefusal = { tick: schedule.nextAt, at, ...reason };
    try {
      await store.refuseTick(schedule.id, schedule.nextAt, this.following(schedule, at), refusal);
    } catch (error) {
      this.backOff(schedule, error);
      return;
    }
    this.retrying.delete(schedule.id);
    if (this.refusalLogged.has(schedule.id)) return;
    this.refusalLogged.add(schedule.id);
    logger.error(
      `schedule ${schedule.id} skipped its tick at ${new Date(schedule.nextAt).toISOString()}: ${reason.message} Its next ticks are skipped too while this lasts, each recorded as the schedule's lastRefusal (logged once).`,
      { scheduleId: schedule.id },
    );
  }

  /** Keeps a tick that failed for a passing reason, to be tried again after its backoff. */
  private backOff(schedule: Schedule, error: unknown): void {
    const { now, logger } = this.options;
    const previous = this.retrying.get(schedule.id);
    const failures = previous?.tick === schedule.nextAt ? previous.failures + 1 : 1;
    const delay = nextDelay(failures, TICK_RETRY);
    this.retrying.set(schedule.id, { tick: schedule.nextAt, failures, at: now() + delay });
    logger.error(
      `schedule ${schedule.id} could not fire its tick at ${new Date(schedule.nextAt).toISOString()} (try ${failures}; again in ${Math.round(delay / 1000)} s): ${describeError(error)}`,
      { scheduleId: schedule.id },
    );
  }

  /** The schedule's tick after `at` (or after its current one, when `at` is earlier). */
  private following(schedule: Schedule, at: number): number {
    return nextTick(schedule.cron, schedule.timezone, Math.max(at, schedule.nextAt));
  }
}
