import { REDACTED } from '../../../protocol/headers.js';
import { encodeValue } from '../../../protocol/values.js';
import type { Change } from '../../store/types.js';
import { resultStepId, type Wait } from './waits.js';

/**
 * The rows of the run's `steps` a wait writes, so the dashboards, `wf logs` and `GET /v1/runs/:id`
 * show it: the SDK never publishes a wait step (it calls `/v2/wait`), so nobody else would.
 * `eventId` stays null: a native wait's column, which the native notify would act on.
 */

const group = (wait: Wait): number | null => (wait.step.concurrent > 1 ? resultStepId(wait.step) : null);

/** The wait registered: the step waits until its deadline. */
export function waitStartedChanges(wait: Wait, at: number): Change[] {
  return [
    {
      type: 'step-suspended',
      runId: wait.runId,
      index: resultStepId(wait.step),
      name: wait.step.stepName,
      kind: 'wait',
      group: group(wait),
      until: wait.deadline,
      eventId: null,
      request: null,
      at,
    },
  ];
}

/** The event's body as the SDK gives it to the workflow: JSON when it parses, else the text. */
function eventValue(data: string): unknown {
  try {
    return JSON.parse(data) as unknown;
  } catch {
    return data;
  }
}

/**
 * A webhook's request as its row shows it: the caller's credential headers `[redacted]` (the
 * workflow itself still gets them, in the message the engine delivers).
 */
function shownWebhookRequest(value: unknown, redactNames: ReadonlySet<string>): unknown {
  const header = (value as { header?: unknown } | null)?.header;
  if (typeof header !== 'object' || header === null) return value;
  const shown = Object.entries(header).map(([name, values]) => {
    return [name, redactNames.has(name.toLowerCase()) ? [REDACTED] : values];
  });
  return { ...(value as object), header: Object.fromEntries(shown) };
}

/**
 * The wait ended: its output is what `context.waitForEvent` returns, `{ eventData, timeout }`
 * (for `waitForWebhook`, the request as event data, its credential headers among `redactNames` redacted).
 */
export function waitEndedChanges(
  wait: Wait,
  ended: { data: string } | { timedOut: true },
  at: number,
  redactNames: ReadonlySet<string> = new Set(),
): Change[] {
  const data = 'data' in ended ? eventValue(ended.data) : undefined;
  const shown = wait.step.stepType === 'WaitForWebhook' ? shownWebhookRequest(data, redactNames) : data;
  const value = 'data' in ended ? { eventData: shown, timeout: false } : { eventData: undefined, timeout: true };
  const output = encodeValue(value, `wait "${wait.step.stepName}"`) ?? null;
  return [
    {
      type: 'step-succeeded',
      runId: wait.runId,
      index: resultStepId(wait.step),
      name: wait.step.stepName,
      kind: 'wait',
      output,
      at,
      durationMs: Math.max(0, at - wait.createdAt),
    },
  ];
}
