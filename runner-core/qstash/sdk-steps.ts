import type { StepKind } from '../../protocol/messages.js';
import { encodeValue } from '../../protocol/values.js';
import type { Change } from '../store/types.js';

/**
 * The steps `@upstash/workflow` publishes (a message body `{stepId, stepName, stepType, out,
 * concurrent, targetStep?, sleepFor?, sleepUntil?…}`) as rows of the run's `steps`: what the
 * dashboards, `wf logs` and `GET /v1/runs/:id` show. `stepId` 0 with a `targetStep` is a plan step
 * (a parallel branch about to run); any other is a result. Nothing here decides how the run goes on:
 * the SDK does, from the messages the runner hands back.
 */

export interface SdkStep {
  stepId: number;
  stepName: string;
  stepType: string;
  out?: unknown;
  concurrent?: number;
  targetStep?: number;
}

const KINDS: Record<string, StepKind> = {
  Run: 'run',
  SleepFor: 'sleep',
  SleepUntil: 'sleep',
  Call: 'call',
  Wait: 'wait',
  Notify: 'run',
  Invoke: 'invoke',
  Initial: 'run',
  WaitForWebhook: 'wait',
  CreateWebhook: 'run',
};

/** A message body's JSON object; undefined when the body is not one. */
export function parseJsonObject(body: string): object | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The step a run message's body holds; undefined when it is not one (a plain payload). */
export function readSdkStep(body: string): SdkStep | undefined {
  return toSdkStep(parseJsonObject(body));
}

/** A parsed value as an SDK step, checked; undefined when it is not one. */
export function toSdkStep(value: unknown): SdkStep | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const step = value as Partial<SdkStep>;
  if (typeof step.stepId !== 'number' || !Number.isInteger(step.stepId) || step.stepId < 0 || step.stepId > 1_000_000)
    return undefined;
  if (typeof step.stepName !== 'string' || typeof step.stepType !== 'string') return undefined;
  return step as SdkStep;
}

export function stepKind(stepType: string): StepKind {
  return KINDS[stepType] ?? 'run';
}

/** The stored output: the SDK sends `out` as JSON text; undefined stays null. */
export function stepOutput(step: SdkStep): string | null {
  if (step.out === undefined || step.out === null) return null;
  let value: unknown = step.out;
  if (typeof step.out === 'string') {
    try {
      value = JSON.parse(step.out);
    } catch {
      value = step.out;
    }
  }
  return encodeValue(value, `step "${step.stepName}"`) ?? null;
}

/**
 * A wait's result is not the SDK's to publish: the wait endpoints (waits*.ts) append it and write
 * its row themselves (with the event's data, not the base64 `out` the SDK reads).
 */
function recorded(step: SdkStep): boolean {
  return step.stepType !== 'Wait' && step.stepType !== 'WaitForWebhook';
}

/**
 * What publishing `step` means for the run's rows: a plan step starts its branch's row; a result
 * succeeds it, unless it is delivered later (`dueAt` after now: a sleep), then the row waits until then.
 * `group`: a parallel branch's group (the first position of its `Promise.all`; its plan steps come in one batch).
 * `durationMs`: about how long the step ran (see `EngineContext.deliveryStartedAt`); 0 when unknown.
 */
export function publishedStepChanges(
  runId: string,
  step: SdkStep,
  now: number,
  dueAt: number,
  group: number | null = null,
  durationMs = 0,
): Change[] {
  if (!recorded(step)) return [];
  const kind = stepKind(step.stepType);
  // A plan step (stepId 0) names the branch it opens in `targetStep`.
  const index = step.stepId === 0 ? (step.targetStep ?? 0) : step.stepId;
  if (index <= 0) return [];
  if (dueAt > now)
    return [
      {
        type: 'step-suspended',
        runId,
        index,
        name: step.stepName,
        kind,
        group,
        until: dueAt,
        eventId: null,
        request: null,
        at: now,
      },
    ];
  if (step.stepId === 0) return [{ type: 'step-started', runId, index, name: step.stepName, kind, group, at: now }];
  return [
    {
      type: 'step-succeeded',
      runId,
      index,
      name: step.stepName,
      kind,
      output: stepOutput(step),
      at: now,
      durationMs,
    },
  ];
}

/** A result delivered: its row succeeds (a no-op when publishing already said so: a succeeded step never changes). */
export function deliveredStepChanges(runId: string, step: SdkStep, now: number, startedAt: number): Change[] {
  if (step.stepId === 0 || !recorded(step)) return [];
  return [
    {
      type: 'step-succeeded',
      runId,
      index: step.stepId,
      name: step.stepName,
      kind: stepKind(step.stepType),
      output: stepOutput(step),
      at: now,
      durationMs: Math.max(0, now - startedAt),
    },
  ];
}
