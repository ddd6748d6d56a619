import { parseCall, type CallSuspension } from './call.js';
import { parseInvoke, type InvokeSuspension } from './invoke.js';
import { parseSleep, type SleepSuspension } from './sleep.js';
import type { ParseSuspension, SuspensionBase } from './types.js';
import { parseWait, type WaitSuspension } from './wait.js';
export type { CallRequest } from './call.js';
export type { InvokeRequest } from './invoke.js';
export type { ParseSuspension, SuspensionBase } from './types.js';

/**
 * The step kinds' wire table: one line per kind. `run` executes in the route; every other kind
 * suspends the request and is resolved by the runner, and travels in a `suspend` line with the
 * fields its module parses. The route side (serve/core/step-kinds/), the runner side
 * (runner-core/step-kinds/) and the view (view/step-kinds/) each keep a table of the same keys.
 */
export interface SuspensionFields {
  sleep: SleepSuspension;
  wait: WaitSuspension;
  call: CallSuspension;
  invoke: InvokeSuspension;
}

/** Kinds the runner resolves while the route's request is over. */
export type SuspendingStepKind = keyof SuspensionFields;
/** Kinds of step: `run` executes in the route, the others suspend (see `SuspensionFields`). */
export type StepKind = 'run' | SuspendingStepKind;

/** A step the runner resolves while the route's request is over: its base fields and its kind's own. */
export type Suspension = {
  [K in SuspendingStepKind]: SuspensionBase & { kind: K } & SuspensionFields[K];
}[SuspendingStepKind];
/** The suspension of one kind. */
export type SuspensionOf<K extends SuspendingStepKind> = Extract<Suspension, { kind: K }>;

/** Each kind's parser of its suspension; `null` for `run`, which never suspends. */
type WireTable = { [K in StepKind]: K extends SuspendingStepKind ? ParseSuspension<SuspensionFields[K]> : null };

const WIRE: WireTable = { run: null, sleep: parseSleep, wait: parseWait, call: parseCall, invoke: parseInvoke };

/** Every kind, in the table's order (a kind registered at run time included). */
export const STEP_KINDS: readonly StepKind[] = Object.keys(WIRE) as StepKind[];

/** Whether `kind` names a known kind. */
export function isStepKind(kind: string): kind is StepKind {
  return Object.hasOwn(WIRE, kind);
}

/** The parser of a suspending kind's fields; undefined for `run` or an unknown kind. */
export function suspensionParser(kind: string): ParseSuspension<object> | undefined {
  return isStepKind(kind) ? (WIRE[kind] ?? undefined) : undefined;
}

/** The kinds that suspend, in the table's order. */
export function suspendingKinds(): string[] {
  return STEP_KINDS.filter((kind) => WIRE[kind] !== null);
}

/**
 * Adds a kind to the wire table at run time: the extension point a toy or experimental kind uses
 * (the built-in kinds are lines of the table above). Also register it on the route side
 * (serve/core/step-kinds), the runner side (runner-core/step-kinds) and in the view.
 */
export function registerWireKind(kind: string, parse: ParseSuspension<object>): void {
  if (isStepKind(kind)) throw new Error(`Step kind "${kind}" is registered already.`);
  (WIRE as unknown as Record<string, ParseSuspension<object>>)[kind] = parse;
  (STEP_KINDS as string[]).push(kind);
}
