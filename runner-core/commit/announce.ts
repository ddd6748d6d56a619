import type { EventBus } from './events.js';
import type { Applied } from '../store/types.js';

/**
 * Tells listeners what a commit wrote, from the records the store returned (`apply` with
 * `returning`, read back in its transaction): whole records (a step's `reportedExecutions`, a run's
 * `stepsDone`) without a read per touched run. Attempts first, then steps, then their runs.
 */
export function announce(events: EventBus, applied: Applied): void {
  for (const attempt of applied.attempts) events.emit({ type: 'attempt', attempt });
  for (const step of applied.steps) events.emit({ type: 'step', step });
  for (const run of applied.runs) events.emit({ type: 'run', run });
}
