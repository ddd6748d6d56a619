import type { StepKind } from '../../../protocol/step-kinds/index.js';
import { callMethods, type CallMethods } from './call.js';
import { invokeMethods, type InvokeMethods } from './invoke.js';
import { runMethods, type RunMethods } from './run.js';
import { sleepMethods, type SleepMethods } from './sleep.js';
import type { SuspendTools } from './types.js';
import { waitMethods, type WaitMethods } from './wait.js';

/** What the route side of every kind gets: the run kind executes, the others suspend. */
export interface StepTools extends SuspendTools {
  execute: RunMethods['run'];
}

/** The methods each kind adds to the workflow context. */
interface KindMethods {
  run: RunMethods;
  sleep: SleepMethods;
  wait: WaitMethods;
  call: CallMethods;
  invoke: InvokeMethods;
}

/** The context methods of all kinds (the workflow context extends it). */
export type StepMethods = RunMethods & SleepMethods & WaitMethods & CallMethods & InvokeMethods;

/**
 * The route side's step-kind table, one line per kind: the context methods it adds (how the route
 * runs or describes the step; replay is the session's, the same for every kind).
 */
const ROUTE: { [K in StepKind]: (tools: StepTools) => KindMethods[K] } = {
  run: runMethods,
  sleep: sleepMethods,
  wait: waitMethods,
  call: callMethods,
  invoke: invokeMethods,
};

/** Every kind's context methods, bound to one drive's tools. */
export function stepMethods(tools: StepTools): StepMethods {
  return Object.assign(
    {},
    ...Object.values(ROUTE).map((methods: (tools: StepTools) => object) => methods(tools)),
  ) as StepMethods;
}

/**
 * Adds a kind's context methods at run time (see protocol/step-kinds' `registerWireKind`): they
 * appear on every workflow context created afterwards.
 */
export function registerRouteKind(kind: string, methods: (tools: StepTools) => object): void {
  if (Object.hasOwn(ROUTE, kind)) throw new Error(`Step kind "${kind}" is registered already on the route side.`);
  (ROUTE as unknown as Record<string, (tools: StepTools) => object>)[kind] = methods;
}
