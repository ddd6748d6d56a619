import { randomUUID } from 'node:crypto';
import type { NewScheduleRequest, Schedule } from '../../api/schedule-dto.js';
import type { StartRequest } from '../../protocol/messages.js';
import { OriginNotAllowedError } from '../errors.js';
import { describeError, type Logger } from '../logger.js';
import { originAllowed, type OriginPattern } from '../origins.js';
import type { Run, ScheduleStore } from '../store/types.js';
import { nextTick } from './cron.js';

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

  constructor(options: ScheduleServiceOptions) {
    this.options = options;
  }

  async create(request: NewScheduleRequest): Promise<Schedule> {
    const { store, now, allowedOrigins, redact } = this.options;
    if (!originAllowed(request.url, allowedOrigins)) throw new OriginNotAllowedError(request.url, allowedOrigins.map((p) => p.text));
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
   * the next tick after *now*: after downtime only the one missed tick fires, not a storm.
   */
  async tick(): Promise<void> {
    const { store, now, startRun, logger } = this.options;
    try {
      for (const schedule of await store.dueSchedules(now(), 50)) {
        try {
          const { run, created } = await startRun({ url: schedule.url, body: schedule.body, headers: schedule.headers, idempotencyKey: tickKey(schedule.id, schedule.nextAt) });
          // Only the runner whose start created the run says so: one line per tick across runners.
          if (created) logger.info(`schedule ${schedule.id} fired its tick at ${new Date(schedule.nextAt).toISOString()}: run ${run.id}`, { scheduleId: schedule.id, runId: run.id });
          const firedAt = now();
          await store.advanceSchedule(schedule.id, schedule.nextAt, nextTick(schedule.cron, schedule.timezone, Math.max(firedAt, schedule.nextAt)), firedAt);
        } catch (error) {
          logger.error(`schedule ${schedule.id} could not fire its tick at ${new Date(schedule.nextAt).toISOString()}: ${describeError(error)}`, { scheduleId: schedule.id });
        }
      }
    } catch (error) {
      logger.error(`looking for due schedules failed: ${describeError(error)}`);
    }
  }
}
