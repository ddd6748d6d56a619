import type { Change } from './changes.js';
import type { Attempt, Run, Step } from './records.js';

/**
 * What an `apply` wrote, as records after the transaction: the runs and steps its changes touched
 * (only with `ApplyOptions.returning`; empty lists otherwise) and the attempts it logged. The
 * runner tells listeners from this instead of reading every touched run back after each commit.
 */
export interface Applied {
  runs: Run[];
  steps: Step[];
  attempts: Attempt[];
}

/** Which records a list of changes touches: runs patched, steps by run (`'all'` when closed). */
export interface Touched {
  runs: Set<string>;
  steps: Map<string, Set<number> | 'all'>;
  attempts: Attempt[];
}

export function touchedBy(changes: readonly Change[]): Touched {
  const touched: Touched = { runs: new Set(), steps: new Map(), attempts: [] };
  for (const change of changes) {
    if (change.type === 'attempt') touched.attempts.push(change.attempt);
    else if (change.type === 'run') touched.runs.add(change.runId);
    else if (change.type === 'steps-closed') touched.steps.set(change.runId, 'all');
    else if (change.type !== 'release') {
      const steps = touched.steps.get(change.runId) ?? new Set<number>();
      if (steps !== 'all') touched.steps.set(change.runId, steps.add(change.index));
    }
  }
  return touched;
}

/**
 * Reads back what `touched` names, through the store's own readers (inside its transaction on
 * SQLite): one read per touched run and per run whose steps changed.
 */
export function readApplied(
  touched: Touched,
  getRun: (id: string) => Run | undefined,
  listSteps: (runId: string) => Step[],
): Applied {
  const applied: Applied = { runs: [], steps: [], attempts: touched.attempts };
  for (const [runId, indexes] of touched.steps) {
    for (const step of listSteps(runId)) if (indexes === 'all' || indexes.has(step.index)) applied.steps.push(step);
  }
  for (const runId of touched.runs) {
    const run = getRun(runId);
    if (run) applied.runs.push(run);
  }
  return applied;
}

/** The part of a group commit's `Applied` that one push's changes wrote (the commit queue splits it). */
export function appliedBy(applied: Applied, changes: readonly Change[]): Applied {
  const touched = touchedBy(changes);
  return {
    runs: applied.runs.filter((run) => touched.runs.has(run.id)),
    steps: applied.steps.filter((step) => {
      const indexes = touched.steps.get(step.runId);
      return indexes === 'all' || indexes?.has(step.index) === true;
    }),
    attempts: touched.attempts,
  };
}

/** An apply that was not asked to read back (or changed nothing). */
export function appliedAttempts(changes: readonly Change[]): Applied {
  return { runs: [], steps: [], attempts: touchedBy(changes).attempts };
}
