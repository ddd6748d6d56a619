import type { EventBus } from './events.js';
import type { Change, Store } from './store/types.js';

/**
 * Tells listeners what committed changes did, read back from the store so they see whole records
 * (a step's `reportedExecutions`, a run's `stepsDone`). Called only when someone listens.
 */
export async function announce(store: Store, events: EventBus, changes: readonly Change[]): Promise<void> {
  const byRun = new Map<string, { steps: Set<number>; allSteps: boolean; run: boolean }>();
  for (const change of changes) {
    if (change.type === 'attempt') {
      events.emit({ type: 'attempt', attempt: change.attempt });
      continue;
    }
    let touched = byRun.get(change.runId);
    if (!touched) byRun.set(change.runId, (touched = { steps: new Set(), allSteps: false, run: false }));
    if (change.type === 'run') touched.run = true;
    else if (change.type === 'steps-closed') touched.allSteps = true;
    else if (change.type !== 'release') touched.steps.add(change.index);
  }
  for (const [runId, touched] of byRun) {
    if (touched.allSteps || touched.steps.size > 0) {
      for (const step of await store.listSteps(runId)) {
        if (touched.allSteps || touched.steps.has(step.index)) events.emit({ type: 'step', step });
      }
    }
    if (touched.run) {
      const run = await store.getRun(runId);
      if (run) events.emit({ type: 'run', run });
    }
  }
}
