import type { LogLevel, LogLine, StepLog } from '../api/dto.js';

/**
 * Step logs as the dashboards and `wf logs --step` present them: one section per execution (the
 * attempt it ran in, how it ended), one row per line (time, level, message and fields), and a
 * note where lines were left out. One authority, so the three views say the same thing.
 */

/** How a level is drawn: plain, quiet, or in the warning or error color. */
export type LogTone = 'text' | 'dim' | 'warn' | 'error';

export const LOG_LEVEL_TONE: Readonly<Record<LogLevel, LogTone>> = {
  debug: 'dim',
  info: 'text',
  log: 'text',
  warn: 'warn',
  error: 'error',
};

export interface LogRow {
  /** `HH:MM:SS.mmm` in local time (as the dashboards show every time), on the route's clock. */
  time: string;
  level: LogLevel;
  tone: LogTone;
  /** The message, then the fields as `key=value` (values as JSON). */
  text: string;
}

export interface LogSection {
  attempt: number;
  status: StepLog['status'];
  /** e.g. "attempt 3 · failed · 12 lines, 40 more not kept" */
  heading: string;
  rows: LogRow[];
  /** e.g. "… 40 more lines not kept (a step keeps 1,000 lines, 64 KiB)"; undefined when nothing was cut. */
  truncated: string | undefined;
}

/** The executions of step `index` that printed something, oldest attempt first. */
export function logsOfStep(logs: readonly StepLog[], index: number): StepLog[] {
  return logs.filter((log) => log.index === index).sort((a, b) => a.attempt - b.attempt);
}

export function logTime(at: number): string {
  if (!Number.isFinite(at)) return '--:--:--.---';
  const d = new Date(at);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

function fieldText(value: unknown): string {
  const json = JSON.stringify(value);
  return json === undefined ? String(value) : json;
}

/** @example logText({ message: 'charged', fields: { amount: 42 } }) // 'charged amount=42' */
export function logText(line: Pick<LogLine, 'message' | 'fields'>): string {
  if (!line.fields) return line.message;
  const fields = Object.entries(line.fields).map(([key, value]) => `${key}=${fieldText(value)}`);
  return fields.length === 0 ? line.message : `${line.message} ${fields.join(' ')}`;
}

export function logRow(line: LogLine): LogRow {
  return { time: logTime(line.at), level: line.level, tone: LOG_LEVEL_TONE[line.level] ?? 'text', text: logText(line) };
}

/** One execution's section. */
export function logSection(log: StepLog): LogSection {
  const count = `${log.lines.length} line${log.lines.length === 1 ? '' : 's'}`;
  const more = log.dropped > 0 ? `, ${log.dropped} more not kept` : '';
  return {
    attempt: log.attempt,
    status: log.status,
    heading: `attempt ${log.attempt} · ${log.status} · ${count}${more}`,
    rows: log.lines.map(logRow),
    truncated:
      log.dropped > 0
        ? `… ${log.dropped} more line${log.dropped === 1 ? '' : 's'} not kept (a step keeps 1,000 lines, 64 KiB)`
        : undefined,
  };
}

/** The sections of step `index`; empty when it printed nothing. */
export function stepLogSections(logs: readonly StepLog[], index: number): LogSection[] {
  return logsOfStep(logs, index).map(logSection);
}

/** One row as a plain text line (the TUI and `wf logs`): `12:00:01.250 warn  careful`. */
export function logRowText(row: LogRow): string {
  return `${row.time} ${row.level.padEnd(5)} ${row.text}`;
}
