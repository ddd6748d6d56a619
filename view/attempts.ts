import type { Attempt, Run, Step } from '../api/dto.js';
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
  const lines = (attempt.responseBody ?? '')
    .split('\n')
    .filter((l) => l.length > 0)
    .map(readLine);
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

/**
 * The deliveries that concern an Upstash-protocol step (runner-core/qstash/). Such an attempt's
 * answer is the SDK's, with no outcome lines; the link is what the engine recorded: a step's result
 * is published while the app handles a delivery, and the step row keeps that delivery's start
 * exactly (`finishedAt - durationMs` = the attempt's `startedAt`, `EngineContext.deliveryStartedAt`).
 * Parallel branches' deliveries can start in the same millisecond: one whose request delivered
 * another branch's plan step (`plannedStepOf`) ran that branch, not this one. Every delivery of the
 * same QStash message (its `upstash-message-id`: the failed tries retried before) ran the same step
 * too. A sleep, a wait or a call is not produced during a delivery: its deliveries are the ones that
 * resolved it (`resolvingDeliveries`).
 * @example deliveriesForStep(attempts, step).map((a) => a.seq) // [2, 3]: a failed try, then the one that produced it
 */
export function deliveriesForStep(attempts: readonly Attempt[], step: StepLink): Attempt[] {
  const resolved = step.kind === 'sleep' || step.kind === 'wait' || step.kind === 'call';
  if (resolved) return resolvingDeliveries(attempts, step.index);
  if (step.finishedAt === null || step.durationMs === null) return [];
  const startedAt = step.finishedAt - step.durationMs;
  const producing = attempts.filter(
    (a) => a.startedAt === startedAt && (plannedStepOf(a) ?? step.index) === step.index,
  );
  if (producing.length === 0) return [];
  const seqs = new Set(producing.map((a) => a.seq));
  const messages = new Set(producing.map(messageIdOf).filter((id) => id !== undefined));
  return attempts.filter((a) => seqs.has(a.seq) || messages.has(messageIdOf(a) ?? ''));
}

/** What links a step to its deliveries (its kind: a step of a kind missing links as a `run` step). */
export type StepLink = Pick<Step, 'index' | 'finishedAt' | 'durationMs'> & Partial<Pick<Step, 'kind'>>;

/**
 * The deliveries that resolved a sleep, wait or call at position `index`: those that delivered its
 * result message (the last of the list sent is the step itself: the sleep's end, the wait's event),
 * a call's callback (the SDK forwards `Upstash-Workflow-StepId` on it), and the call's own request
 * (the callback's `sourceMessageId`), each with the failed tries of the same message.
 */
function resolvingDeliveries(attempts: readonly Attempt[], index: number): Attempt[] {
  const resolving = attempts.filter(
    (a) => deliveredStep(a)?.stepId === index || a.requestHeaders['upstash-workflow-stepid'] === String(index),
  );
  const messages = new Set(resolving.map(messageIdOf).filter((id) => id !== undefined));
  for (const callback of resolving) {
    const source = sourceMessageIdOf(callback.requestBody);
    if (source !== undefined) messages.add(source);
  }
  return attempts.filter((a) => resolving.includes(a) || messages.has(messageIdOf(a) ?? ''));
}

/** The message a callback's body says it answers (QStash's `sourceMessageId`); undefined when unreadable. */
function sourceMessageIdOf(requestBody: string): string | undefined {
  if (!requestBody.startsWith('{')) return undefined;
  try {
    const id = (JSON.parse(requestBody) as { sourceMessageId?: unknown }).sourceMessageId;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The QStash message a delivery carried; undefined when its headers were redacted (`Upstash-Redact-Fields`). */
function messageIdOf(attempt: Attempt): string | undefined {
  const id = attempt.requestHeaders['upstash-message-id'];
  return id === undefined || id === '[redacted]' ? undefined : id;
}

const delivered = new WeakMap<Attempt, { stepId: number; targetStep?: number } | null>();

/**
 * The step a delivery delivered, read from what it sent: the SDK's body is the run's messages, the
 * delivered one last (`[{messageId, body: base64, callType}, …]`), a step's body `{stepId, …}`.
 * Undefined when it delivered anything else, or its body is not there to read (empty for a lazy
 * fetch, clipped, redacted).
 */
function deliveredStep(attempt: Attempt): { stepId: number; targetStep?: number } | undefined {
  let step = delivered.get(attempt);
  if (step === undefined) {
    step = readDeliveredStep(attempt.requestBody);
    delivered.set(attempt, step);
  }
  return step ?? undefined;
}

/** The parallel branch a delivery ran: the plan step it delivered is `{stepId: 0, targetStep: n, …}`. */
export function plannedStepOf(attempt: Attempt): number | undefined {
  const step = deliveredStep(attempt);
  return step?.stepId === 0 ? step.targetStep : undefined;
}

function readDeliveredStep(requestBody: string): { stepId: number; targetStep?: number } | null {
  if (!requestBody.startsWith('[')) return null;
  try {
    const list = JSON.parse(requestBody) as unknown;
    const last = Array.isArray(list) ? (list.at(-1) as { body?: unknown } | undefined) : undefined;
    if (typeof last?.body !== 'string') return null;
    const step = JSON.parse(atob(last.body)) as { stepId?: unknown; targetStep?: unknown };
    if (typeof step.stepId !== 'number' || !Number.isInteger(step.stepId)) return null;
    if (step.stepId > 0) return { stepId: step.stepId };
    const planned = typeof step.targetStep === 'number' && Number.isInteger(step.targetStep);
    return planned ? { stepId: 0, targetStep: step.targetStep as number } : null;
  } catch {
    return null;
  }
}

/**
 * The attempts the dashboards list under a step: drive requests whose outcome lines speak of it,
 * or for an Upstash-protocol run the deliveries that ran it.
 */
export function attemptsOfStep(
  run: Pick<Run, 'protocol'> | undefined,
  attempts: readonly Attempt[],
  step: StepLink,
): Attempt[] {
  return run?.protocol === 'upstash' ? deliveriesForStep(attempts, step) : attemptsForStep(attempts, step.index);
}

/** What a step's attempt list says when it is empty. */
export function noAttemptsText(run: Pick<Run, 'protocol'> | undefined): string {
  return run?.protocol === 'upstash'
    ? 'No delivery ran this step (the runner links a step to the delivery that produced its result).'
    : 'No drive response mentions this step.';
}

/**
 * The steps an attempt concerns, the other way round from `attemptsOfStep`: for a native run the
 * steps its outcome lines speak of, for an Upstash-protocol run the steps whose deliveries include it.
 */
export function stepsOfAttempt<S extends Pick<Step, 'index' | 'finishedAt' | 'durationMs'>>(
  run: Pick<Run, 'protocol'> | undefined,
  attempts: readonly Attempt[],
  steps: readonly S[],
  attempt: Attempt,
): S[] {
  if (run?.protocol !== 'upstash') {
    const indexes = stepIndexesOf(attempt);
    return steps.filter((step) => indexes.has(step.index));
  }
  return steps.filter((step) => deliveriesForStep(attempts, step).some((a) => a.seq === attempt.seq));
}
