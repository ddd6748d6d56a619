import { ProtocolError } from './errors.js';
import { describe, expectInteger, expectNumber, expectObject, expectString, type Fields } from './validate.js';

/**
 * Step logs on the wire: what a step printed (`console.*` inside `context.run`'s function) and
 * what it logged with `context.log`, sent with the step's `step` line or with the `failed` line of
 * the attempt it failed in. Absent when the step printed nothing, so a quiet step costs no byte.
 */

export const LOG_LEVELS = ['debug', 'info', 'log', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** One printed or logged line. */
export interface LogLine {
  /** Epoch ms on the route's clock. */
  at: number;
  level: LogLevel;
  message: string;
  /** `context.log`'s structured fields, as JSON. */
  fields?: Record<string, unknown>;
}

/** One execution's lines; `dropped` counts the lines left out past the bounds below. */
export interface StepLogs {
  lines: LogLine[];
  dropped?: number;
}

/**
 * Bounds per step execution: a step that prints in a loop never grows the response, the attempt's
 * log or the store past these; what is cut is counted (`dropped`) and shown as truncated.
 */
export const STEP_LOG_LIMITS = { maxLines: 1_000, maxChars: 64 * 1024 } as const;

const LEVELS: ReadonlySet<string> = new Set(LOG_LEVELS);

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === 'string' && LEVELS.has(value);
}

function parseLogLine(value: unknown, where: string): LogLine {
  const o = expectObject(value, where);
  const level = o.level;
  if (!isLogLevel(level))
    throw new ProtocolError(
      `Expected \`level\` in ${where} to be one of ${LOG_LEVELS.join(', ')}, got ${describe(level)}.`,
    );
  const line: LogLine = { at: expectNumber(o, 'at', where), level, message: expectString(o, 'message', where) };
  if (o.fields !== undefined) line.fields = expectObject(o.fields, `\`fields\` in ${where}`);
  return line;
}

/** Parses the `logs` field of a step line (where names it); throws ProtocolError naming the field. */
export function parseStepLogs(value: unknown, where: string): StepLogs {
  const o: Fields = expectObject(value, where);
  if (!Array.isArray(o.lines))
    throw new ProtocolError(`Expected \`lines\` in ${where} to be an array, got ${describe(o.lines)}.`);
  if (o.lines.length > STEP_LOG_LIMITS.maxLines) {
    throw new ProtocolError(
      `Expected at most ${STEP_LOG_LIMITS.maxLines} \`lines\` in ${where}, got ${o.lines.length}.`,
    );
  }
  const logs: StepLogs = { lines: o.lines.map((line, i) => parseLogLine(line, `\`lines[${i}]\` in ${where}`)) };
  if (o.dropped !== undefined) logs.dropped = expectInteger(o, 'dropped', where);
  return logs;
}

/**
 * The same bounds applied by the receiver (the runner), so a route that sends more than its
 * capture allows (another SDK, a bug) cannot grow the store: lines past the character bound are
 * dropped and counted. Returns `logs` itself when it is within the bounds (the usual case).
 */
export function boundStepLogs(logs: StepLogs): StepLogs {
  let chars = 0;
  for (let i = 0; i < logs.lines.length; i++) {
    const line = logs.lines[i]!;
    chars += line.message.length + (line.fields === undefined ? 0 : JSON.stringify(line.fields).length);
    if (chars > STEP_LOG_LIMITS.maxChars + 256) {
      // 256: room for a cut line's marker, which the capture adds past the bound.
      return { lines: logs.lines.slice(0, i), dropped: (logs.dropped ?? 0) + logs.lines.length - i };
    }
  }
  return logs;
}
