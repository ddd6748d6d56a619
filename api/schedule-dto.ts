/**
 * A tick the runner refused to start a run for, for a reason that does not pass by itself (the
 * route's origin is no longer allowed): the tick was skipped, the schedule moved on to its next.
 */
export interface ScheduleRefusal {
  /** The tick refused (epoch ms). */
  tick: number;
  /** When it was refused. */
  at: number;
  /** The refusal's code (`ORIGIN_NOT_ALLOWED`) and message. */
  code: string;
  message: string;
}

/** A cron schedule as the runner API returns it (`GET /v1/schedules`). Times are epoch ms. */
export interface Schedule {
  id: string;
  /** The workflow route each tick starts a run of. */
  url: string;
  /** 5 fields, or 6 with a leading seconds field. */
  cron: string;
  /** IANA zone the cron is read in. */
  timezone: string;
  /** The body every run it starts gets (raw text, usually JSON). */
  body: string;
  /** Headers every run gets, credentials redacted as the runner redacts a run's. */
  headers: Record<string, string>;
  /** The next tick. */
  nextAt: number;
  lastFiredAt: number | null;
  /** The last tick refused and skipped; null once a tick fires again (or none ever was). */
  lastRefusal: ScheduleRefusal | null;
  createdAt: number;
}

export interface NewScheduleRequest {
  url: string;
  cron: string;
  body?: string;
  headers?: Record<string, string>;
  timezone?: string;
}

function fail(where: string, expected: string, got: unknown): never {
  throw new TypeError(`Expected ${where} to be ${expected}, got ${JSON.stringify(got)}.`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks `POST /v1/schedules`'s body; a non-string `body` is sent as JSON. */
export function parseNewSchedule(value: unknown, where = 'the request body'): NewScheduleRequest {
  if (!isRecord(value)) fail(where, 'an object', value);
  const { url, cron, body, headers, timezone } = value;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) fail(`${where}.url`, 'an http(s) URL', url);
  if (typeof cron !== 'string' || cron.trim() === '') fail(`${where}.cron`, 'a cron expression', cron);
  if (timezone !== undefined && typeof timezone !== 'string')
    fail(`${where}.timezone`, 'an IANA time zone name', timezone);
  if (headers !== undefined && (!isRecord(headers) || Object.values(headers).some((v) => typeof v !== 'string'))) {
    fail(`${where}.headers`, 'an object of strings', headers);
  }
  return {
    url,
    cron,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    headers: headers as Record<string, string> | undefined,
    timezone: timezone as string | undefined,
  };
}

/** Checks one schedule of an answer. */
export function parseSchedule(value: unknown, where: string): Schedule {
  if (!isRecord(value)) fail(where, 'a schedule object', value);
  for (const key of ['id', 'url', 'cron', 'timezone', 'body'] as const)
    if (typeof value[key] !== 'string') fail(`${where}.${key}`, 'a string', value[key]);
  for (const key of ['nextAt', 'createdAt'] as const)
    if (typeof value[key] !== 'number') fail(`${where}.${key}`, 'a number', value[key]);
  if (value.lastFiredAt !== null && typeof value.lastFiredAt !== 'number')
    fail(`${where}.lastFiredAt`, 'a number or null', value.lastFiredAt);
  if (!isRecord(value.headers)) fail(`${where}.headers`, 'an object', value.headers);
  // Absent from a runner older than refusals: read as none.
  const refusal = value.lastRefusal ?? null;
  if (
    refusal !== null &&
    (!isRecord(refusal) || typeof refusal.tick !== 'number' || typeof refusal.message !== 'string')
  )
    fail(`${where}.lastRefusal`, 'a refusal object or null', refusal);
  return { ...value, lastRefusal: refusal } as unknown as Schedule;
}

/** Checks `GET /v1/schedules`'s answer. */
export function parseScheduleList(value: unknown, where: string): { schedules: Schedule[] } {
  if (!isRecord(value) || !Array.isArray(value.schedules))
    fail(`${where}.schedules`, 'an array', isRecord(value) ? value.schedules : value);
  return { schedules: value.schedules.map((s, i) => parseSchedule(s, `${where}.schedules[${i}]`)) };
}
