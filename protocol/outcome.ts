import { ProtocolError, type SerializedError } from './errors.js';
import { parseStepKind, type StepKind } from './messages.js';
import {
  expectBoolean,
  expectInteger,
  expectNumber,
  expectObject,
  expectString,
  optionalInteger,
  optionalString,
  type Fields,
} from './validate.js';

/**
 * One line of a drive response (NDJSON). Step lines arrive as steps start and finish; the
 * response ends with exactly one terminal line (`done`, `failed` or `continue`).
 */
export type Outcome =
  | { t: 'started'; index: number; name: string; kind: StepKind }
  | { t: 'step'; index: number; name: string; kind: StepKind; output?: string; durationMs: number }
  | { t: 'done'; output?: string }
  | {
      t: 'failed';
      error: SerializedError;
      retryable: boolean;
      retryAfterMs?: number;
      /** The step that threw; absent when the workflow failed outside any step. */
      step?: { index: number; name: string; kind: StepKind; durationMs: number };
    }
  | { t: 'continue' };

export type TerminalOutcome = Extract<Outcome, { t: 'done' | 'failed' | 'continue' }>;

export function isTerminal(outcome: Outcome): outcome is TerminalOutcome {
  return outcome.t === 'done' || outcome.t === 'failed' || outcome.t === 'continue';
}

/** One outcome as one NDJSON line (with the trailing newline). */
export function encodeOutcome(outcome: Outcome): string {
  return JSON.stringify(outcome) + '\n';
}

function parseError(value: unknown, where: string): SerializedError {
  const o = expectObject(value, where);
  const error: SerializedError = { name: expectString(o, 'name', where), message: expectString(o, 'message', where) };
  const stack = optionalString(o, 'stack', where);
  if (stack !== undefined) error.stack = stack;
  const code = optionalString(o, 'code', where);
  if (code !== undefined) error.code = code;
  return error;
}

function stepFields(o: Fields, where: string): { index: number; name: string; kind: StepKind } {
  return { index: expectInteger(o, 'index', where), name: expectString(o, 'name', where), kind: parseStepKind(o, 'kind', where) };
}

/** Parses one already-split line. Throws ProtocolError naming the line's kind and field. */
export function decodeOutcome(line: string): Outcome {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new ProtocolError(`Malformed outcome line (not JSON): ${line.slice(0, 80)}`, { cause: error });
  }
  const o = expectObject(value, 'an outcome line');
  const t = expectString(o, 't', 'an outcome line');
  const where = `the "${t}" outcome`;
  switch (t) {
    case 'started':
      return { t, ...stepFields(o, where) };
    case 'step': {
      const out: Outcome = { t, ...stepFields(o, where), durationMs: expectNumber(o, 'durationMs', where) };
      const output = optionalString(o, 'output', where);
      if (output !== undefined) out.output = output;
      return out;
    }
    case 'done': {
      const output = optionalString(o, 'output', where);
      return output === undefined ? { t } : { t, output };
    }
    case 'failed': {
      const out: Extract<Outcome, { t: 'failed' }> = {
        t,
        error: parseError(o.error, `\`error\` in ${where}`),
        retryable: expectBoolean(o, 'retryable', where),
      };
      const retryAfterMs = optionalInteger(o, 'retryAfterMs', where);
      if (retryAfterMs !== undefined) out.retryAfterMs = retryAfterMs;
      if (o.step !== undefined) {
        const stepWhere = `\`step\` in ${where}`;
        const s = expectObject(o.step, stepWhere);
        out.step = { ...stepFields(s, stepWhere), durationMs: expectNumber(s, 'durationMs', stepWhere) };
      }
      return out;
    }
    case 'continue':
      return { t };
    default:
      throw new ProtocolError(`Unknown outcome kind "${t}": expected started, step, done, failed or continue.`);
  }
}

/**
 * Splits a byte stream into outcome lines as they arrive. Feed chunks; get whole lines back.
 * Kept free of node streams so it runs anywhere.
 */
export class OutcomeLineSplitter {
  private readonly decoder = new TextDecoder();
  private rest = '';
  push(chunk: Uint8Array): string[] {
    const text = this.rest + this.decoder.decode(chunk, { stream: true });
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    return lines.filter((l) => l.length > 0);
  }
  /** What is left when the stream ended; non-empty means a truncated last line. */
  end(): string {
    return this.rest + this.decoder.decode();
  }
}
