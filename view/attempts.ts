import type { Attempt } from '../api/dto.js';
import { decodeOutcome, type Outcome } from '../protocol/outcome.js';

/**
 * Which drive requests concern a step: those whose response streamed a line about it (started,
 * finished, failed in, suspended at). Lines are read with the protocol's own `decodeOutcome`,
 * so what counts as "about step n" follows the wire contract, not a guess at its JSON.
 */

/** One line of a drive response body; `outcome` is absent when the line is not a valid outcome (a cut stream). */
export interface OutcomeLine {
  text: string;
  outcome?: Outcome;
  /** The step positions this line speaks of. */
  indexes: readonly number[];
}

/**
 * The positions one outcome speaks of.
 * @example indexesOf({ t: 'suspend', steps: [{ index: 2, … }, { index: 3, … }] }) // [2, 3]
 */
export function indexesOf(outcome: Outcome): number[] {
  switch (outcome.t) {
    case 'started':
    case 'step':
      return [outcome.index];
    case 'failed':
      return outcome.step ? [outcome.step.index] : [];
    case 'suspend':
      return outcome.steps.map((s) => s.index);
    default:
      return [];
  }
}

function readLine(text: string): OutcomeLine {
  try {
    const outcome = decodeOutcome(text);
    return { text, outcome, indexes: indexesOf(outcome) };
  } catch {
    return { text, indexes: [] };
  }
}

// Attempts never change once logged, and views ask each render: parse each body once.
const cache = new WeakMap<Attempt, readonly OutcomeLine[]>();

/**
 * The non-empty lines of an attempt's response body, each with what it speaks of.
 * @example outcomeLines(attempt).filter((l) => l.indexes.includes(step.index)) // the step's own lines
 */
export function outcomeLines(attempt: Attempt): readonly OutcomeLine[] {
  const cached = cache.get(attempt);
  if (cached) return cached;
  const lines = (attempt.responseBody ?? '').split('\n').filter((l) => l.length > 0).map(readLine);
  cache.set(attempt, lines);
  return lines;
}

/** @example stepIndexesOf(attempt).has(0) */
export function stepIndexesOf(attempt: Attempt): ReadonlySet<number> {
  return new Set(outcomeLines(attempt).flatMap((l) => l.indexes));
}

/** Is this line one of step `index`'s own? */
export function isLineOf(line: OutcomeLine, index: number): boolean {
  return line.indexes.includes(index);
}

/**
 * The attempts that concern step `index`, in the order given.
 * @example attemptsForStep(attempts, 1).map((a) => a.seq) // [1, 3]
 */
export function attemptsForStep(attempts: readonly Attempt[], index: number): Attempt[] {
  return attempts.filter((attempt) => outcomeLines(attempt).some((l) => isLineOf(l, index)));
}
