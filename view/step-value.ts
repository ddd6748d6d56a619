import type { Step } from '../api/dto.js';
import { decodeValue } from '../protocol/values.js';
import { displayValue } from '../protocol/display.js';

/** What holds a value in the API's records: a run's or a step's `outputEncoded` (api/dto.ts). */
export interface Valued {
  outputEncoded: string | null;
}

/**
 * The faithful (devalue-encoded) value of a step or run: the one place views read it. The API's
 * `output` is JSON and absent when the value would not survive JSON (a Date, Map, BigInt…);
 * `outputEncoded` always carries it.
 * @example decodeValue(encodedOutput(step) ?? undefined)
 */
export function encodedOutput(record: Valued): string | null {
  return record.outputEncoded;
}

/** A step's value decoded; undefined when it has none or it does not decode. */
export function stepValue(record: Valued): unknown {
  const text = encodedOutput(record);
  if (text === null) return undefined;
  try {
    return decodeValue(text);
  } catch {
    return undefined;
  }
}

/** The answer a `call` step returns: `{ status, headers, body }`. */
export interface CallAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as text: as received, or pretty JSON when it was parsed as JSON. */
  body: string;
}

/**
 * A `call` step's answer; undefined when it has none (yet) or the value is not one.
 * @example callAnswer(step)?.status // 201
 */
export function callAnswer(step: Step): CallAnswer | undefined {
  if (step.kind !== 'call') return undefined;
  const value = stepValue(step);
  if (typeof value !== 'object' || value === null || typeof (value as { status?: unknown }).status !== 'number')
    return undefined;
  const answer = value as { status: number; headers?: Record<string, string>; body?: unknown };
  const body =
    answer.body === undefined
      ? ''
      : typeof answer.body === 'string'
        ? answer.body
        : (JSON.stringify(answer.body, null, 2) ?? String(answer.body));
  return { status: answer.status, headers: answer.headers ?? {}, body };
}

/** A finished `wait` step that ended by its timeout rather than its event. */
export function waitTimedOut(step: Step): boolean {
  return (
    step.kind === 'wait' &&
    step.status === 'succeeded' &&
    (stepValue(step) as { timeout?: unknown } | undefined)?.timeout === true
  );
}

/** A step's or run's value as people read it (protocol/display.ts): Date, Map, Set, BigInt kept. */
export function displayOutput(record: Valued): string {
  return displayValue(encodedOutput(record));
}
