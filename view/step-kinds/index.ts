import type { StepKind } from '../../protocol/step-kinds/index.js';
import { callView } from './call.js';
import { invokeView } from './invoke.js';
import { runView } from './run.js';
import { sleepView } from './sleep.js';
import type { StepKindView } from './types.js';
import { waitView } from './wait.js';
export type { At, StepKindView, StepSection, SuspendedSpan } from './types.js';

/** The view's step-kind table, one line per kind: how every frontend shows it. */
const VIEWS: Record<StepKind, StepKindView> = {
  run: runView,
  sleep: sleepView,
  wait: waitView,
  call: callView,
  invoke: invokeView,
};

/**
 * How a step of `kind` is shown. A kind this view does not know (a newer runner's) is shown like a
 * step the runner resolves, with no detail.
 */
export function stepKindView(kind: string): StepKindView {
  return Object.hasOwn(VIEWS, kind) ? VIEWS[kind as StepKind] : UNKNOWN;
}

const UNKNOWN: StepKindView = { ...runView, printsLogs: false };

/** Adds a kind's presentation at run time (see protocol/step-kinds' `registerWireKind`). */
export function registerKindView(kind: string, view: StepKindView): void {
  if (Object.hasOwn(VIEWS, kind)) throw new Error(`Step kind "${kind}" is registered already in the view.`);
  (VIEWS as Record<string, StepKindView>)[kind] = view;
}
