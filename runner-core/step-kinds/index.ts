import type { StepKind, SuspendingStepKind } from '../../protocol/step-kinds/index.js';
import { callKind } from './call.js';
import { invokeKind } from './invoke.js';
import { sleepKind } from './sleep.js';
import type { RunnerStepKind } from './types.js';
import { waitKind } from './wait.js';
export type { Resolution, ResolveContext, RunnerStepKind, StoredSuspension } from './types.js';

type RunnerTable = { [K in StepKind]: K extends SuspendingStepKind ? RunnerStepKind<K> : null };

/**
 * The runner side's step-kind table, one line per kind: how the runner stores, resolves and shows
 * each kind the route suspends (`run` is the route's own: null). Resolved in this order, so a run's
 * calls go out first (they take longest) and a drive aborted meanwhile takes no kept event.
 */
const RUNNER: RunnerTable = { run: null, call: callKind, invoke: invokeKind, sleep: sleepKind, wait: waitKind };

/** A kind's runner hooks; undefined for `run` (and a kind this runner does not know). */
export function runnerKind(kind: string): RunnerStepKind<SuspendingStepKind> | undefined {
  const hooks = Object.hasOwn(RUNNER, kind) ? RUNNER[kind as StepKind] : null;
  return (hooks ?? undefined) as RunnerStepKind<SuspendingStepKind> | undefined;
}

/** The suspending kinds in resolution order. */
export function runnerKinds(): SuspendingStepKind[] {
  return (Object.keys(RUNNER) as StepKind[]).filter((kind): kind is SuspendingStepKind => RUNNER[kind] !== null);
}

/**
 * Adds a kind's runner hooks at run time (see protocol/step-kinds' `registerWireKind`); it is
 * resolved after the built-in kinds.
 */
export function registerRunnerKind(kind: string, hooks: RunnerStepKind<never>): void {
  if (Object.hasOwn(RUNNER, kind)) throw new Error(`Step kind "${kind}" is registered already on the runner side.`);
  (RUNNER as unknown as Record<string, unknown>)[kind] = hooks;
}
