import type { StepRecord } from '../../protocol/messages.js';
import type { Step } from '../store/types.js';

/**
 * The committed steps a route replays from, as a drive request carries them: every position up to
 * the last finished step (position i holds step i). A step that failed for good replays as its
 * error, so the workflow can catch it. A position still without a result before a finished one (a
 * step being retried while the one beside it in a `Promise.all` succeeded, the losing wait of a
 * `Promise.race`) goes as `pending`: the route runs or suspends it again, and does not execute the
 * finished steps after it again. The records stop at a position with no step at all.
 */
export function toReplayRecords(steps: readonly Step[]): StepRecord[] {
  const records: StepRecord[] = [];
  for (const step of steps) {
    if (step.index !== records.length) break;
    const record: StepRecord = { index: step.index, name: step.name, kind: step.kind };
    if (step.status === 'succeeded' || step.status === 'failed') {
      if (step.output !== null) record.output = step.output;
      if (step.status === 'failed')
        record.error = step.error ?? { name: 'Error', message: `Step "${step.name}" failed.` };
    } else record.pending = true;
    records.push(record);
  }
  // Pending positions at the end need no record: the workflow reaches them as new steps.
  while (records.at(-1)?.pending) records.pop();
  return records;
}
