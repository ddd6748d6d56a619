import { displayValue } from '../../protocol/display.js';
import { decodeValue } from '../../protocol/values.js';
import type { Attempt, Step } from '../../api/dto.js';

/** `12 ms`, `1.5 s`, `3m 04s`, `2h 05m`, `3d 4h`. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  const pad = (n: number): string => String(n).padStart(2, '0');
  const s = Math.floor(seconds);
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

/** Local clock time; the date too when it is not today. */
export function formatTime(ms: number | null | undefined, now: number = Date.now()): string {
  if (ms === null || ms === undefined) return '–';
  const date = new Date(ms);
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  return date.toDateString() === new Date(now).toDateString() ? time : `${date.toLocaleDateString()} ${time}`;
}

/** `in 4 s`, `3m 02s ago`. */
export function formatRelative(ms: number, now: number): string {
  const delta = ms - now;
  if (Math.abs(delta) < 1000) return delta >= 0 ? 'now' : 'just now';
  return delta >= 0 ? `in ${formatDuration(delta)}` : `${formatDuration(-delta)} ago`;
}

/** A raw body as people read it: pretty JSON when it is JSON, else the text as it is. */
export function prettyBody(text: string | null | undefined): string {
  if (text === null || text === undefined || text === '') return '';
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.stringify(JSON.parse(trimmed), null, 2);
    } catch {}
  }
  return text;
}

/** A stored step value (devalue), shown with Date, Map, Set, BigInt kept (protocol/display.ts). */
export function stepValue(text: string | null): string {
  return displayValue(text);
}

/** The answer a `call` step returns: `{ status, headers, body }`. */
export interface CallAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as text: as received, or pretty JSON when it was parsed as JSON. */
  body: string;
}

/** Decodes a `call` step's output; undefined when the step has no answer (yet) or it is not one. */
export function callAnswer(step: Step): CallAnswer | undefined {
  if (step.kind !== 'call' || step.outputEncoded === null) return undefined;
  let value: unknown;
  try {
    value = decodeValue(step.outputEncoded);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || typeof (value as { status?: unknown }).status !== 'number') return undefined;
  const answer = value as { status: number; headers?: Record<string, string>; body?: unknown };
  const body = answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : (JSON.stringify(answer.body, null, 2) ?? String(answer.body));
  return { status: answer.status, headers: answer.headers ?? {}, body };
}

const indexCache = new WeakMap<Attempt, ReadonlySet<number>>();

/**
 * The step positions a drive response's NDJSON lines speak of (started, finished, failed in,
 * suspended at). Kept per attempt object (attempts never change), since the page asks each second.
 */
export function stepIndexesOf(attempt: Attempt): ReadonlySet<number> {
  const cached = indexCache.get(attempt);
  if (cached) return cached;
  const indexes = new Set<number>();
  for (const line of (attempt.responseBody ?? '').split('\n')) {
    if (!line.startsWith('{')) continue;
    let outcome: { t?: string; index?: unknown; step?: { index?: unknown }; steps?: { index?: unknown }[] };
    try {
      outcome = JSON.parse(line) as typeof outcome;
    } catch {
      continue;
    }
    const add = (value: unknown): void => void (typeof value === 'number' && indexes.add(value));
    add(outcome.index);
    add(outcome.step?.index);
    if (Array.isArray(outcome.steps)) for (const s of outcome.steps) add(s?.index);
  }
  indexCache.set(attempt, indexes);
  return indexes;
}

/** The attempts whose responses started, finished, failed or suspended at this step. */
export function attemptsForStep(attempts: readonly Attempt[], index: number): Attempt[] {
  return attempts.filter((attempt) => stepIndexesOf(attempt).has(index));
}

/** Sorted header entries, for a stable table. */
export function headerEntries(headers: Record<string, string> | null | undefined): [string, string][] {
  return Object.entries(headers ?? {}).sort(([a], [b]) => a.localeCompare(b));
}
