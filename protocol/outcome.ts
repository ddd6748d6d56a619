import { ProtocolError, type SerializedError } from './errors.js';
import { parseStepKind, type StepKind } from './messages.js';
import { suspendingKinds, suspensionParser, type Suspension } from './step-kinds/index.js';
import { parseStepLogs, type StepLogs } from './step-logs.js';
import {
  expectBoolean,
  expectInteger,
  expectNumber,
  expectObject,
  expectSerializedError,
  expectString,
  optionalInteger,
  optionalString,
  type Fields,
} from './validate.js';

/** Where a step stands: its position, name and kind, and the parallel group it was started in. */
export interface StepRef {
  index: number;
  name: string;
  kind: StepKind;
}

export type { Suspension, SuspensionOf, SuspendingStepKind } from './step-kinds/index.js';
export { parseCallRequest } from './step-kinds/call.js';
export { parseInvokeRequest } from './step-kinds/invoke.js';

/**
 * One line of a drive response (NDJSON). Step lines arrive as steps start and finish; the
 * response ends with exactly one terminal line.
 */
export type Outcome =
  | { t: 'started'; index: number; name: string; kind: StepKind; group: number }
  /** `logs`: what the step printed, absent when nothing (protocol/step-logs.ts). */
  | { t: 'step'; index: number; name: string; kind: StepKind; output?: string; durationMs: number; logs?: StepLogs }
  | { t: 'done'; output?: string }
  | {
      t: 'failed';
      error: SerializedError;
      retryable: boolean;
      retryAfterMs?: number;
      /** The step that threw, with its own retry policy if it set one; absent outside any step. */
      step?: StepRef & { durationMs: number; retries?: number; retryDelayMs?: number; logs?: StepLogs };
    }
  | { t: 'continue' }
  /** The workflow awaits steps only the runner can finish: sleeps, event waits, HTTP calls. */
  | { t: 'suspend'; steps: Suspension[] }
  /** `context.cancel()`. */
  | { t: 'cancel' };

export type TerminalOutcome = Extract<Outcome, { t: 'done' | 'failed' | 'continue' | 'suspend' | 'cancel' }>;

export function isTerminal(outcome: Outcome): outcome is TerminalOutcome {
  return outcome.t !== 'started' && outcome.t !== 'step';
}

/** One outcome as one NDJSON line (with the trailing newline). */
export function encodeOutcome(outcome: Outcome): string {
  return JSON.stringify(outcome) + '\n';
}

function stepFields(o: Fields, where: string): StepRef {
  return {
    index: expectInteger(o, 'index', where),
    name: expectString(o, 'name', where),
    kind: parseStepKind(o, 'kind', where),
  };
}

function parseSuspension(value: unknown, where: string): Suspension {
  const o = expectObject(value, where);
  const base = {
    index: expectInteger(o, 'index', where),
    name: expectString(o, 'name', where),
    group: expectInteger(o, 'group', where),
  };
  const kind = expectString(o, 'kind', where);
  const parse = suspensionParser(kind);
  if (!parse) {
    const kinds = suspendingKinds();
    throw new ProtocolError(
      `Expected \`kind\` in ${where} to be ${kinds.slice(0, -1).join(', ')} or ${kinds.at(-1)}, got "${kind}".`,
    );
  }
  // The kind's own fields after the base ones: its module's parser checked them.
  return { kind, ...base, ...parse(o, where) } as Suspension;
}

function parseFailedStep(value: unknown, where: string): NonNullable<Extract<Outcome, { t: 'failed' }>['step']> {
  const s = expectObject(value, where);
  const step: NonNullable<Extract<Outcome, { t: 'failed' }>['step']> = {
    ...stepFields(s, where),
    durationMs: expectNumber(s, 'durationMs', where),
  };
  const retries = optionalInteger(s, 'retries', where);
  if (retries !== undefined) step.retries = retries;
  const retryDelayMs = optionalInteger(s, 'retryDelayMs', where);
  if (retryDelayMs !== undefined) step.retryDelayMs = retryDelayMs;
  if (s.logs !== undefined) step.logs = parseStepLogs(s.logs, `\`logs\` in ${where}`);
  return step;
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
      return { t, ...stepFields(o, where), group: o.group === undefined ? 0 : expectInteger(o, 'group', where) };
    case 'step': {
      const out: Outcome = { t, ...stepFields(o, where), durationMs: expectNumber(o, 'durationMs', where) };
      const output = optionalString(o, 'output', where);
      if (output !== undefined) out.output = output;
      if (o.logs !== undefined) out.logs = parseStepLogs(o.logs, `\`logs\` in ${where}`);
      return out;
    }
    case 'done': {
      const output = optionalString(o, 'output', where);
      return output === undefined ? { t } : { t, output };
    }
    case 'failed': {
      const out: Extract<Outcome, { t: 'failed' }> = {
        t,
        error: expectSerializedError(o.error, `\`error\` in ${where}`),
        retryable: expectBoolean(o, 'retryable', where),
      };
      const retryAfterMs = optionalInteger(o, 'retryAfterMs', where);
      if (retryAfterMs !== undefined) out.retryAfterMs = retryAfterMs;
      if (o.step !== undefined) out.step = parseFailedStep(o.step, `\`step\` in ${where}`);
      return out;
    }
    case 'suspend': {
      if (!Array.isArray(o.steps) || o.steps.length === 0)
        throw new ProtocolError(`Expected \`steps\` in ${where} to be a non-empty array.`);
      return { t, steps: o.steps.map((s, i) => parseSuspension(s, `\`steps[${i}]\` in ${where}`)) };
    }
    case 'continue':
    case 'cancel':
      return { t };
    default:
      throw new ProtocolError(
        `Unknown outcome kind "${t}": expected started, step, done, failed, continue, suspend or cancel.`,
      );
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
