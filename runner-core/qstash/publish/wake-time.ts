import type { MessageSpec } from '../messages/spec.js';
import { parseJsonObject } from '../sdk-steps.js';

/**
 * When a message is due: `Upstash-Not-Before` (epoch seconds) or `Upstash-Delay` after publishing.
 * A `context.sleepUntil` step is never due before the instant the app asked for: the SDK sends that
 * instant as `Upstash-Not-Before` rounded to whole seconds (`toFixed(0)`: up to half a second early),
 * while the step it publishes keeps it exactly (`sleepUntil`, fractional epoch seconds). The later of
 * the two wins, so a run wakes at or after `sleepUntil`, never before.
 */
export function dueAt(spec: MessageSpec, now: number): number {
  const scheduled = spec.notBefore ?? now + spec.delayMs;
  // Only a step's body can hold one; most bodies are results, some large: parsed only when it can.
  if (spec.workflow === undefined || !spec.body.includes('"sleepUntil"')) return scheduled;
  const step = parseJsonObject(spec.body) as { stepType?: unknown; sleepUntil?: unknown } | undefined;
  const until = step?.stepType === 'SleepUntil' ? step.sleepUntil : undefined;
  if (typeof until !== 'number' || !Number.isFinite(until)) return scheduled;
  return Math.max(scheduled, Math.ceil(until * 1_000));
}
